"""Compatibility keys from the command line: create one for a dialect, list them, revoke one."""

import click

from ..compat.keys import generate_compat_key, list_compat_keys, revoke_compat_key
from ..compat.models.compat import DIALECTS
from ..domain_errors import DomainError
from .deployment import default_brand, fail_on_api_error

KEY_WARNING = (
    "Warning: the plugin's IPN sends this key to your own server (that is how the plugin checks "
    "the IPN); serve that address over HTTPS only."
)


@click.command("create-compat-key")
@click.option("--dialect", required=True, type=click.Choice(DIALECTS))
@click.option("--label", required=True)
@click.option("--test", is_flag=True, help="A test key: it sees and makes test payments only.")
def create_compat_key(dialect, label, test):
    """Generate a compatibility key for one dialect; the key alone is printed on the last line."""
    try:
        key, secret = generate_compat_key(default_brand(), label, dialect, livemode=not test)
    except DomainError as error:
        fail_on_api_error(error)
    mode = "test" if test else "live"
    click.echo(f"Created {mode} {dialect} key {key.label!r} (id {key.id}). {KEY_WARNING}")
    click.echo("It is shown once:")
    click.echo(secret)


@click.command("list-compat-keys")
def list_compat_keys_command():
    """The brand's compatibility keys: id, dialect, label, prefix, active or revoked, live or
    test."""
    for key in list_compat_keys(default_brand()):
        state = "active" if key.active else "revoked"
        mode = "live" if key.livemode else "test"
        click.echo(f"{key.id}\t{key.dialect}\t{key.label}\t{key.display_prefix}…\t{state}\t{mode}")


@click.command("revoke-compat-key")
@click.argument("key_id")
def revoke_compat_key_command(key_id):
    """Revoke a compatibility key by id; the plugin using it stops working at once."""
    try:
        key = revoke_compat_key(default_brand(), key_id)
    except DomainError as error:
        fail_on_api_error(error)
    click.echo(f"Revoked {key.dialect} key {key.label!r}.")
