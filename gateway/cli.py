"""`flask gateway …`: the operator's commands; each exits non-zero with a clear message on bad input."""
import click
from flask import current_app
from flask.cli import AppGroup
from marshmallow import ValidationError, validate

from .errors import ApiError
from .extensions import db
from .models import Brand, User
from .services.api_keys import generate_key, revoke_key
from .services.brands import create_first_brand

gateway_cli = AppGroup("gateway", help="Operate the payment gateway.")

DEMO_EMAIL = "admin@example.com"


def default_brand():
    """The deployment's brand (the first one), or a clear error when bootstrap has not run."""
    brand = db.session.execute(db.select(Brand).order_by(Brand.id).limit(1)).scalar_one_or_none()
    if brand is None:
        raise click.ClickException("No brand yet: run `flask gateway bootstrap` first.")
    return brand


def is_email(text):
    """Whether the text is an e-mail address, by the rule the API's schemas apply."""
    try:
        validate.Email()(text)
    except ValidationError:
        return False
    return len(text) <= 254


def fail_on_api_error(error):
    """Turn a service's ApiError into a command-line failure."""
    raise click.ClickException(error.message)


def echo_sign_in():
    """Where the merchant panel's sign-in page is."""
    click.echo(f"Panel:        {current_app.config['BASE_URL']}/panel/sign-in")


@gateway_cli.command("bootstrap")
@click.option("--brand-name", default="Demo Shop", show_default=True)
@click.option("--email", default=DEMO_EMAIL, show_default=True, help="The super-administrator's sign-in.")
@click.option("--password", default=None, help="Defaults to a random one, printed once.")
def bootstrap(brand_name, email, password):
    """Create the brand, a super-administrator and a first API key at once; running it again changes nothing."""
    import secrets

    if db.session.execute(db.select(Brand).limit(1)).scalar_one_or_none() is not None:
        click.echo("Already bootstrapped: nothing changed.")
        echo_sign_in()
        return
    if not is_email(email.strip().lower()):
        raise click.ClickException(f"Not an e-mail address: {email!r}")
    if password is not None and len(password) < 8:
        raise click.ClickException("The password must have at least 8 characters.")
    password = password or secrets.token_urlsafe(12)
    try:
        brand, admin, secret = create_first_brand(brand_name, email.strip().lower(), password)
    except ApiError as error:
        fail_on_api_error(error)
    run_bootstrap_hooks(brand)
    click.echo(f"Brand:        {brand.name}")
    echo_sign_in()
    click.echo(f"Admin login:  {admin.email}")
    click.echo(f"Password:     {password}")
    click.echo("API key (shown once, keep it safe):")
    click.echo(secret)


# Later parts of the gateway add steps here (e.g. a first payment method).
BOOTSTRAP_HOOKS = []


def run_bootstrap_hooks(brand):
    """The extra bootstrap steps; one that fails is reported and skipped, since the install is already committed."""
    for hook in BOOTSTRAP_HOOKS:
        try:
            hook(brand)
        except Exception as error:  # noqa: BLE001 - the admin's password and the key below must still be shown
            db.session.rollback()
            click.echo(f"Skipped the bootstrap step {hook.__name__}: {error}", err=True)


@gateway_cli.command("create-admin")
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--super-admin", is_flag=True, help="Grant every permission, keys and settings included.")
def create_admin(email, password, super_admin):
    """Create a panel user (staff unless --super-admin)."""
    brand = default_brand()
    email = email.strip().lower()
    if not is_email(email):
        raise click.ClickException(f"Not an e-mail address: {email!r}")
    if len(password) < 8:
        raise click.ClickException("The password must have at least 8 characters.")
    if db.session.execute(db.select(User).where(User.email == email)).scalar_one_or_none():
        raise click.ClickException(f"A user with e-mail {email} already exists.")
    user = User(brand_id=brand.id, email=email, role="super_admin" if super_admin else "staff")
    user.set_password(password)
    db.session.add(user)
    db.session.commit()
    click.echo(f"Created {user.role} {email}.")


@gateway_cli.command("create-key")
@click.option("--label", required=True)
@click.option("--scopes", default="read,write", show_default=True, help="Comma-separated: read, write, admin.")
def create_key(label, scopes):
    """Generate an API key; the key alone is printed on the last line."""
    try:
        key, secret = generate_key(default_brand(), label, scopes)
    except ApiError as error:
        fail_on_api_error(error)
    click.echo(f"Created key {key.label!r} with scopes {key.scopes}. It is shown once:")
    click.echo(secret)


@gateway_cli.command("revoke-key")
@click.argument("label")
def revoke_key_command(label):
    """Revoke the active key with this label; it stops working on the next request."""
    try:
        revoke_key(default_brand(), label=label)
    except ApiError as error:
        fail_on_api_error(error)
    click.echo(f"Revoked key {label!r}.")


from . import cli_checkout  # noqa: E402,F401 - registers add-method and the bootstrap bKash method
from . import cli_mobile  # noqa: E402,F401 - registers pair-code and simulate-sms
from . import cli_jobs  # noqa: E402,F401 - registers worker, sweep and rotate-webhook-secret
