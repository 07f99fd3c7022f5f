"""`flask gateway add-method|update-method|list-methods`: the receiving numbers shown at
checkout."""

import click

from ..domain_errors import DomainError
from ..payments import methods as payment_methods
from ..payments.fees import describe_fee
from ..payments.methods import PROVIDER_NAMES, checked_provider, normalize_mobile_number
from ..payments.models.payment_method import (
    ACCOUNT_KINDS,
    API,
    METHOD_KINDS,
    PROOF_CHOICES,
    PROVIDERS,
)
from ..wallets.credentials import add_api_method
from .deployment import default_brand, fail_on_api_error

# A sample number for `make run`, stored with is_demo so every page that shows it says so.
DEMO_NUMBER = "01700000000"
DEMO_MARK = "DEMO number: not yours, customers must not pay to it"


def describe(method):
    """One line about a method, for the operator; an enabled demo number is marked unmistakably."""
    flags = [] if method.enabled else ["disabled"]
    if method.is_demo:
        flags.insert(0, DEMO_MARK if method.enabled else "demo")
    if method.ask_sender_number:
        flags.append("asks sender number")
    if describe_fee(method) != "no fee":
        flags.append(f"fee {describe_fee(method)}")
    extra = f" ({', '.join(flags)})" if flags else ""
    if method.is_wallet_api:
        name = f" {method.display_name!r}" if method.display_name else ""
        return f"#{method.id} {PROVIDER_NAMES[method.provider]} API{name}{extra}"
    if method.is_account:
        bank = f" {method.bank_name}" if method.bank_name else ""
        proof = f", proof {method.proof}" if method.proof else ""
        return (
            f"#{method.id} {method.kind} {method.display_name!r}{bank} {method.account_name} "
            f"{method.account_number}{proof}{extra}"
        )
    return f"#{method.id} {PROVIDER_NAMES[method.provider]} {method.kind} {method.number}{extra}"


# The add-method options whose name is not their field's.
OPTION_NAMES = {"display_name": "--name", "bank_name": "--bank", "bank_branch": "--branch"}


def fail_on_field_error(error):
    """A service's refusal as a command-line failure naming the option at fault."""
    items = error.errors or []
    if items and items[0].get("field"):
        field = items[0]["field"]
        option = OPTION_NAMES.get(field, "--" + field.replace("_", "-"))
        raise click.BadParameter(items[0]["message"], param_hint=option)
    fail_on_api_error(error)


@click.command("add-method")
@click.option("--provider", type=click.Choice(PROVIDERS, case_sensitive=False))
@click.option("--number", help="The receiving number, 01XXXXXXXXX.")
@click.option(
    "--kind",
    default="personal",
    show_default=True,
    type=click.Choice(METHOD_KINDS + ACCOUNT_KINDS + (API,)),
    help="A wallet's account type, manual / bank (docs/methods.md), or api: the wallet's own "
    "merchant API (docs/wallet-apis.md).",
)
@click.option("--base-url", default=None, help="api: the wallet's API root.")
@click.option("--app-key", default=None, help="api, bKash: the app key.")
@click.option("--app-secret", default=None, help="api, bKash: the app secret.")
@click.option("--username", default=None, help="api, bKash: the API username.")
@click.option("--password", default=None, help="api, bKash: the API password.")
@click.option("--merchant-id", default=None, help="api, Nagad: the merchant id.")
@click.option(
    "--merchant-private-key",
    default=None,
    type=click.File("r"),
    help="api, Nagad: a file holding the merchant's RSA private key (PEM or Nagad's base64).",
)
@click.option(
    "--wallet-public-key",
    default=None,
    type=click.File("r"),
    help="api, Nagad: a file holding Nagad's RSA public key (PEM or Nagad's base64).",
)
@click.option(
    "--instructions", default=None, help="Extra text shown to the customer under the steps."
)
@click.option("--instructions-bn", default=None, help="manual/bank: the instructions in Bangla.")
@click.option("--name", "display_name", default=None, help="manual: the name customers see.")
@click.option("--account-name", default=None, help="manual/bank: the account holder's name.")
@click.option("--account-number", default=None, help="manual/bank: the account number.")
@click.option("--bank", "bank_name", default=None, help="bank: the bank's name.")
@click.option("--branch", "bank_branch", default=None, help="bank: branch or routing number.")
@click.option(
    "--proof",
    default="optional",
    show_default=True,
    type=click.Choice(PROOF_CHOICES),
    help="manual: whether the customer uploads a receipt.",
)
@click.option(
    "--ask-sender-number", is_flag=True, help="Ask the customer for the number they paid from."
)
@click.option("--disabled", is_flag=True, help="Add it switched off.")
def add_method_command(
    provider, number, kind, instructions, ask_sender_number, disabled, base_url, **account
):
    """Add a payment method customers can pay to at checkout."""
    api_secrets = {name: account.pop(name) for name in API_SECRET_OPTIONS}
    if kind == API:
        add_api_method_command(provider, base_url, not disabled, api_secrets, account)
        return
    given = [name for name, value in api_secrets.items() if value] + (
        ["base_url"] if base_url else []
    )
    if given:
        raise click.UsageError(f"--{given[0].replace('_', '-')} is for --kind api only.")
    if kind in ACCOUNT_KINDS:
        if provider or number:
            raise click.UsageError(
                f"--kind {kind} takes --account-name and --account-number, not --provider/--number."
            )
        try:
            method = payment_methods.add_account_method(
                default_brand(), kind, enabled=not disabled, instructions=instructions, **account
            )
        except DomainError as error:
            fail_on_field_error(error)
        click.echo(f"Added payment method {describe(method)}.")
        return
    if not provider or not number:
        raise click.UsageError("A wallet method needs --provider and --number.")
    given = [name for name, value in account.items() if value and name != "proof"]
    if given:
        raise click.UsageError(f"--{given[0].replace('_', '-')} is for --kind manual or bank only.")
    try:
        method = payment_methods.add_method(
            default_brand(),
            provider,
            number,
            kind,
            instructions=instructions,
            ask_sender_number=ask_sender_number,
            enabled=not disabled,
        )
    except DomainError as error:
        fail_on_api_error(error)
    click.echo(f"Added payment method {describe(method)}.")


# The options of an api method's secrets (each provider's SECRET_FIELDS take theirs).
API_SECRET_OPTIONS = (
    "app_key",
    "app_secret",
    "username",
    "password",
    "merchant_id",
    "merchant_private_key",
    "wallet_public_key",
)


def add_api_method_command(provider, base_url, enabled, api_secrets, account):
    """add-method --kind api: a wallet's merchant API, its secrets sealed."""
    if not provider or not base_url:
        raise click.UsageError("An api method needs --provider and --base-url.")
    try:
        method = add_api_method(
            default_brand(),
            provider,
            base_url,
            {
                name: value.read() if hasattr(value, "read") else value
                for name, value in api_secrets.items()
                if value
            },
            enabled=enabled,
            display_name=account.get("display_name"),
        )
    except DomainError as error:
        fail_on_field_error(error)
    click.echo(f"Added payment method {describe(method)}.")


@click.command("update-method")
@click.argument("method_id", type=int)
@click.option("--kind", default=None, type=click.Choice(METHOD_KINDS))
@click.option("--instructions", default=None, help='Replace the extra text ("" removes it).')
@click.option("--ask-sender-number/--no-ask-sender-number", default=None)
@click.option("--enable/--disable", "enabled", default=None)
@click.option(
    "--position", default=None, type=click.IntRange(min=0), help="Display order, lowest first."
)
@click.option("--fee-fixed", default=None, help="Fixed fee in taka the customer adds, e.g. 5.")
@click.option(
    "--fee-percent", default=None, help="Percent of the amount the customer adds, e.g. 1.85."
)
@click.option("--fee-min", default=None, help='Smallest fee in taka ("" removes it).')
@click.option("--fee-max", default=None, help='Largest fee in taka ("" removes it).')
def update_method_command(method_id, **options):
    """Change a payment method (see `list-methods` for ids)."""
    changes = {name: value for name, value in options.items() if value is not None}
    if not changes:
        raise click.UsageError("Nothing to change: give at least one option.")
    try:
        method = payment_methods.update_method(
            payment_methods.get_method(default_brand(), method_id), **changes
        )
    except DomainError as error:
        field = (error.errors or [{}])[0].get("field") or ""
        if field.startswith("fee_"):  # name the option at fault, as click does for its own checks
            raise click.BadParameter(error.message, param_hint=f"--{field.replace('_', '-')}")
        fail_on_api_error(error)
    click.echo(f"Updated payment method {describe(method)}.")


@click.command("list-methods")
def list_methods_command():
    """List the brand's payment methods in display order; enabled demo numbers are marked DEMO."""
    methods = payment_methods.list_methods(default_brand())
    if not methods:
        click.echo("No payment methods yet: add one with `flask gateway add-method`.")
    for method in methods:
        click.echo(describe(method))
    for method in (method for method in methods if method.is_demo and method.enabled):
        click.echo(
            f"WARNING: #{method.id} is a DEMO number and switched on: add your own number, then "
            f"`flask gateway update-method {method.id} --disable`."
        )


def requested_methods(bkash_numbers, method_specs, production):
    """Bootstrap's --bkash/--method options as checked (provider, number, kind); bad input fails
    before any write.
    """
    # (option, what was typed, provider:number[:kind]): an error names the option and the value the
    # operator typed.
    specs = [("--bkash", number, f"bkash:{number}") for number in bkash_numbers]
    specs += [("--method", spec, spec) for spec in method_specs]
    methods = []
    for option, typed, spec in specs:
        provider, _, rest = spec.partition(":")
        number, _, kind = rest.partition(":")
        try:
            provider = checked_provider(provider)
        except DomainError as error:
            raise click.BadParameter(
                f"{typed!r}: {error.errors[0]['message']}", param_hint=option
            ) from None
        normalized = normalize_mobile_number(number)
        if normalized is None:
            raise click.BadParameter(
                f"{typed!r}: the number must be a Bangladeshi mobile number such as 01XXXXXXXXX.",
                param_hint=option,
            )
        if (kind or "personal") not in METHOD_KINDS:
            raise click.BadParameter(
                f"{typed!r}: the kind must be one of {', '.join(METHOD_KINDS)}.", param_hint=option
            )
        if production and normalized == DEMO_NUMBER:
            raise click.BadParameter(
                f"{normalized} is the demo number; give your own.", param_hint=option
            )
        methods.append((provider, normalized, kind or "personal"))
    return methods


def add_bootstrap_methods(brand, methods, production):
    """Bootstrap step: the numbers asked for; without any, a demo bKash number in development and
    none in production.
    """
    for provider, number, kind in methods:
        try:
            method = payment_methods.add_method(brand, provider, number, kind)
        except DomainError as error:  # the same number twice on the command line
            click.echo(f"Payment method {provider}:{number} skipped: {error.message}", err=True)
            continue
        click.echo(f"Payment method: {describe(method)}")
    if methods:
        return
    if production:
        click.echo(
            "Payment methods: none added. Customers cannot pay until you add your "
            "receiving number: "
            "`flask gateway add-method --provider bkash --number 01XXXXXXXXX` (or Settings "
            "in the panel)."
        )
        return
    method = payment_methods.add_method(brand, "bkash", DEMO_NUMBER, "personal", demo=True)
    click.echo(
        f"Payment method: {describe(method)} — replace it with your own bKash number "
        f"(`flask gateway add-method --provider bkash --number 01XXXXXXXXX`, then "
        f"`flask gateway update-method {method.id} --disable`)."
    )
