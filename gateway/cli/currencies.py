"""`flask gateway set-currency CODE --rate R`: accept a currency at a rate (taka per unit)."""

import click

from ..accounts.audit import record_audit
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..payments.currencies import accept_currency
from .deployment import default_brand, fail_on_api_error

WHO = "command line"  # the audit log's Who of a rate set here


@click.command("set-currency")
@click.argument("code")
@click.option("--rate", required=True, help="Taka per unit of CODE, e.g. 121.50.")
def set_currency_command(code, rate):
    """Accept CODE (e.g. USD) at RATE taka per unit, or change its rate; new payments only."""
    brand = default_brand()
    try:
        with unit_of_work():
            details = accept_currency(brand, code, rate, WHO)
            record_audit(
                None,
                "currency.accept" if details.get("accepted") else "currency.rate",
                ("currency", details["code"]),
                details,
                brand_id=brand.id,
                who=WHO,
            )
    except DomainError as error:
        fail_on_api_error(error)
    old, new = details["rate"]
    if details.get("accepted"):
        click.echo(f"{details['code']} accepted at {new} taka per unit.")
    elif old is None:
        click.echo(f"{details['code']} rated at {new} taka per unit (it had no rate).")
    else:
        click.echo(f"{details['code']} rate changed from {old} to {new} taka per unit.")
    click.echo(f"Accepted currencies: {', '.join(brand.currency_list)}.")
