"""`flask gateway add-method|update-method|list-methods`: the receiving numbers shown at checkout."""
import click

from .cli import BOOTSTRAP_HOOKS, default_brand, fail_on_api_error, gateway_cli
from .errors import ApiError
from .models import METHOD_KINDS, PROVIDERS
from .services import payment_methods
from .services.payment_methods import PROVIDER_NAMES

DEMO_NUMBER = "01700000000"


def describe(method):
    """One line about a method, for the operator."""
    flags = [] if method.enabled else ["disabled"]
    if method.ask_sender_number:
        flags.append("asks sender number")
    extra = f" ({', '.join(flags)})" if flags else ""
    return f"#{method.id} {PROVIDER_NAMES[method.provider]} {method.kind} {method.number}{extra}"


@gateway_cli.command("add-method")
@click.option("--provider", required=True, type=click.Choice(PROVIDERS, case_sensitive=False))
@click.option("--number", required=True, help="The receiving number, 01XXXXXXXXX.")
@click.option("--kind", default="personal", show_default=True, type=click.Choice(METHOD_KINDS))
@click.option("--instructions", default=None, help="Extra text shown to the customer under the steps.")
@click.option("--ask-sender-number", is_flag=True, help="Ask the customer for the number they paid from.")
@click.option("--disabled", is_flag=True, help="Add it switched off.")
def add_method_command(provider, number, kind, instructions, ask_sender_number, disabled):
    """Add a payment method customers can pay to at checkout."""
    try:
        method = payment_methods.add_method(
            default_brand(), provider, number, kind, instructions=instructions,
            ask_sender_number=ask_sender_number, enabled=not disabled)
    except ApiError as error:
        fail_on_api_error(error)
    click.echo(f"Added payment method {describe(method)}.")


@gateway_cli.command("update-method")
@click.argument("method_id", type=int)
@click.option("--kind", default=None, type=click.Choice(METHOD_KINDS))
@click.option("--instructions", default=None, help="Replace the extra text (\"\" removes it).")
@click.option("--ask-sender-number/--no-ask-sender-number", default=None)
@click.option("--enable/--disable", "enabled", default=None)
@click.option("--position", default=None, type=click.IntRange(min=0), help="Display order, lowest first.")
def update_method_command(method_id, **options):
    """Change a payment method (see `list-methods` for ids)."""
    changes = {name: value for name, value in options.items() if value is not None}
    if not changes:
        raise click.UsageError("Nothing to change: give at least one option.")
    try:
        method = payment_methods.update_method(payment_methods.get_method(default_brand(), method_id), **changes)
    except ApiError as error:
        fail_on_api_error(error)
    click.echo(f"Updated payment method {describe(method)}.")


@gateway_cli.command("list-methods")
def list_methods_command():
    """List the brand's payment methods in display order."""
    methods = payment_methods.list_methods(default_brand())
    if not methods:
        click.echo("No payment methods yet: add one with `flask gateway add-method`.")
    for method in methods:
        click.echo(describe(method))


def add_demo_bkash_method(brand):
    """Bootstrap step: a bKash method so that `make run` can take a payment at once."""
    method = payment_methods.add_method(brand, "bkash", DEMO_NUMBER, "personal")
    click.echo(f"Payment method: {describe(method)} — a DEMO number: replace it with your own bKash "
               f"number (`flask gateway add-method --provider bkash --number 01XXXXXXXXX`, then "
               f"`flask gateway update-method {method.id} --disable`).")


BOOTSTRAP_HOOKS.append(add_demo_bkash_method)
