"""`flask gateway …`: the operator's commands; each exits non-zero with a clear message on bad
input.
"""

import secrets

import click
from flask import current_app
from marshmallow import ValidationError, validate

from ..accounts.api_keys import generate_key, revoke_key
from ..accounts.brands import create_first_brand
from ..accounts.models.brand import Brand
from ..accounts.models.user import User
from ..accounts.two_factor import reset_two_factor
from ..accounts.users import end_sessions, find_user_by_email
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..extensions import db
from .checkout import add_bootstrap_methods, requested_methods
from .deployment import default_brand, fail_on_api_error

DEMO_EMAIL = "admin@example.com"
DEMO_BRAND_NAME = "Demo Shop"
BRAND_NAME_MAX = 120  # Brand.name's column


def is_email(text):
    """Whether the text is an e-mail address, by the rule the API's schemas apply."""
    try:
        validate.Email()(text)
    except ValidationError:
        return False
    return len(text) <= 254


def echo_sign_in():
    """Where the merchant panel's sign-in page is."""
    click.echo(f"Panel:        {current_app.config['BASE_URL']}/panel/sign-in")


@click.command("bootstrap")
@click.option(
    "--brand-name",
    default=None,
    help="The shop's name, shown to customers at checkout; required in production "
    f"({DEMO_BRAND_NAME!r} otherwise).",
)
@click.option(
    "--email",
    default=None,
    help=f"The super-administrator's sign-in; required in production ({DEMO_EMAIL} otherwise).",
)
@click.option("--password", default=None, help="Defaults to a random one, printed once.")
@click.option(
    "--bkash",
    "bkash_numbers",
    multiple=True,
    metavar="01XXXXXXXXX",
    help="Your bKash (personal) receiving number; repeatable.",
)
@click.option(
    "--method",
    "method_specs",
    multiple=True,
    metavar="PROVIDER:NUMBER[:KIND]",
    help="A receiving number of any provider, e.g. nagad:01812345678:merchant; repeatable.",
)
@click.option(
    "--admin-key",
    is_flag=True,
    help="Give the first API key the admin scope (API key management) too.",
)
def bootstrap(brand_name, email, password, bkash_numbers, method_specs, admin_key):
    """Create the brand, a super-administrator, a first API key and the receiving numbers; running
    it again changes nothing. Without numbers, development adds a marked demo bKash number and
    production adds none."""
    if db.session.execute(db.select(Brand).limit(1)).scalar_one_or_none() is not None:
        click.echo("Already bootstrapped: nothing changed.")
        echo_sign_in()
        return
    production = current_app.config["APP_ENV"] == "production"
    if email is None and production:
        # A guessable sign-in is half a password: production takes the owner's real address, never a
        # default.
        raise click.ClickException(
            "Give the administrator's e-mail address: `flask gateway bootstrap --email "
            "you@yourshop.com` (it is the panel sign-in; production has no default)."
        )
    if brand_name is None and production:
        # Customers see this name at checkout and on the way back to the shop: never a placeholder
        # in production.
        raise click.ClickException(
            "Give your shop's name as customers should see it at checkout: `flask gateway "
            'bootstrap --brand-name "Your Shop" …` (production has no default).'
        )
    brand_name = " ".join((brand_name or DEMO_BRAND_NAME).split())
    if not brand_name or len(brand_name) > BRAND_NAME_MAX:
        raise click.ClickException(f"The shop's name must have 1 to {BRAND_NAME_MAX} characters.")
    email = (email or DEMO_EMAIL).strip().lower()
    if not is_email(email):
        raise click.ClickException(f"Not an e-mail address: {email!r}")
    if password is not None and len(password) < 8:
        raise click.ClickException("The password must have at least 8 characters.")
    methods = requested_methods(bkash_numbers, method_specs, production)
    password = password or secrets.token_urlsafe(12)
    scopes = ("read", "write", "admin") if admin_key else ("read", "write")
    try:
        with unit_of_work():
            brand, admin, secret = create_first_brand(brand_name, email, password, scopes)
    except DomainError as error:
        fail_on_api_error(error)
    click.echo(f"Brand:        {brand.name}")
    echo_sign_in()
    click.echo(f"Admin login:  {admin.email}")
    click.echo(f"Password:     {password}")

    def add_payment_methods(brand):
        """Bootstrap step: the numbers asked for, else a marked demo number outside production."""
        add_bootstrap_methods(brand, methods, production)

    run_bootstrap_hooks(brand, [add_payment_methods, *BOOTSTRAP_HOOKS])
    click.echo(
        "Webhook secret (shown once; your receiver checks X-Service-Signature-V1 with it, as"
        " examples/webhook_receiver.py does):"
    )
    click.echo(f"  {brand.webhook_secret}")
    click.echo(f"API key, scopes {', '.join(scopes)} (shown once, keep it safe):")
    click.echo(secret)


# Later parts of the gateway add steps here; each is called with the new brand.
BOOTSTRAP_HOOKS = []


def run_bootstrap_hooks(brand, hooks=None):
    """The extra bootstrap steps, each a unit of work of its own: one that fails is reported and
    skipped (its unit keeps none of its work), since the install is already committed."""
    for hook in BOOTSTRAP_HOOKS if hooks is None else hooks:
        try:
            with unit_of_work():
                hook(brand)
        except Exception as error:  # noqa: BLE001 - the admin's password and the key below must still be shown
            click.echo(f"Skipped the bootstrap step {hook.__name__}: {error}", err=True)


@click.command("create-admin")
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option(
    "--super-admin", is_flag=True, help="Grant every permission, keys and settings included."
)
def create_admin(email, password, super_admin):
    """Create a panel user (staff, or an owner with --super-admin)."""
    brand = default_brand()
    email = email.strip().lower()
    if not is_email(email):
        raise click.ClickException(f"Not an e-mail address: {email!r}")
    if len(password) < 8:
        raise click.ClickException("The password must have at least 8 characters.")
    if db.session.execute(db.select(User).where(User.email == email)).scalar_one_or_none():
        raise click.ClickException(f"A user with e-mail {email} already exists.")
    with unit_of_work():
        user = User(brand_id=brand.id, email=email, role="owner" if super_admin else "staff")
        user.set_password(password)
        db.session.add(user)
    click.echo(f"Created {user.role} {email}.")


@click.command("create-key")
@click.option("--label", required=True)
@click.option(
    "--scopes", default="read,write", show_default=True, help="Comma-separated: read, write, admin."
)
@click.option("--test", is_flag=True, help="A test key: it sees and makes test objects only.")
def create_key(label, scopes, test):
    """Generate an API key (a test key with --test); the key alone is printed on the last line."""
    try:
        key, secret = generate_key(default_brand(), label, scopes, livemode=not test)
    except DomainError as error:
        fail_on_api_error(error)
    mode = "test" if test else "live"
    click.echo(f"Created {mode} key {key.label!r} with scopes {key.scopes}. It is shown once:")
    click.echo(secret)


@click.command("revoke-key")
@click.argument("label")
def revoke_key_command(label):
    """Revoke the active key with this label; it stops working on the next request."""
    try:
        revoke_key(default_brand(), label=label)
    except DomainError as error:
        fail_on_api_error(error)
    click.echo(f"Revoked key {label!r}.")


@click.command("reset-two-factor")
@click.option("--email", required=True, help="The panel user's e-mail address.")
def reset_two_factor_command(email):
    """Turn a user's two-factor sign-in off (they enrol again) and end their sessions."""
    user = find_user_by_email(email)
    if user is None:
        raise click.ClickException(f"No panel user has the e-mail {email.strip().lower()}.")
    if not user.two_factor_enabled and not user.totp_secret_sealed:
        raise click.ClickException(f"{user.email} has no two-factor sign-in to reset.")
    with unit_of_work():
        reset_two_factor(user)
        end_sessions(user)
    click.echo(f"Two-factor sign-in is off for {user.email}; they can sign in with the password.")
