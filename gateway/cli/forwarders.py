"""Forwarders from the command line: add one for a public SMS app, list them, revoke one."""

import click

from ..clock import isoformat
from ..devices.forwarders import (
    FORWARDER_APPS,
    brand_forwarders,
    create_forwarder,
    forwarder_url,
    revoke_forwarder,
)
from ..domain_errors import DomainError
from .deployment import default_brand, fail_on_api_error


@click.command("add-forwarder")
@click.option("--app", "app_id", required=True, type=click.Choice(tuple(FORWARDER_APPS)))
@click.option("--label", required=True, help="The phone's name, e.g. 'Counter phone'.")
@click.option(
    "--signing-key",
    default=None,
    help="android-sms-gateway only: your own signing key (12+ characters); default: a new one.",
)
def add_forwarder(app_id, label, signing_key):
    """Add a forwarder; prints `url: …`, then `signing_key: …` or `header: Name: value` (once)."""
    try:
        _, credentials = create_forwarder(default_brand(), app_id, label, signing_key)
    except DomainError as error:
        fail_on_api_error(error)
    click.echo(f"url: {credentials.url}")
    if credentials.signing_key is not None:
        click.echo(f"signing_key: {credentials.signing_key}")
    else:
        click.echo(f"header: {credentials.header_name}: {credentials.header_value}")


@click.command("list-forwarders")
def list_forwarders_command():
    """The brand's active forwarders: id, app, label, last text, last heartbeat, intake URL."""
    for device in brand_forwarders(default_brand()):
        last_sms = isoformat(device.last_sms_at) if device.last_sms_at else "-"
        beat = isoformat(device.last_heartbeat_at) if device.last_heartbeat_at else "-"
        click.echo(
            "\t".join((device.uuid, device.app, device.name, last_sms, beat, forwarder_url(device)))
        )


@click.command("revoke-forwarder")
@click.argument("forwarder_id")
def revoke_forwarder_command(forwarder_id):
    """Revoke a forwarder by id (list-forwarders' first column); its URL refuses texts at once."""
    try:
        device = revoke_forwarder(default_brand(), forwarder_id, "revoked from the command line")
    except DomainError as error:
        fail_on_api_error(error)
    click.echo(f"Revoked forwarder {device.name!r} ({device.uuid}).")
