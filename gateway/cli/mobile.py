"""`flask gateway pair-code` and `flask gateway simulate-sms`: the companion app's side, from a
terminal.
"""

import click
import requests
import segno
from flask import current_app

from ..devices.pairing import CODE_TTL, create_pairing_code, pairing_qr_payload, server_url
from ..money import InvalidAmount, parse_amount
from ..payments.models.payment_method import PROVIDERS
from ..sms.simulator import (
    SimulatorRefused,
    forward_as_device,
    refuse_in_production,
    simulated_text,
    simulator_device,
    stored_sms,
)
from .deployment import default_brand


@click.command("pair-code")
@click.option("--qr", is_flag=True, help="Also draw the QR code the app scans.")
def pair_code(qr):
    """Create a one-time pairing code for the companion app; the code is the last line."""
    brand = default_brand()
    code = create_pairing_code(brand)
    if qr:
        segno.make(pairing_qr_payload(code, brand), error="m").terminal(compact=True)
    click.echo(
        f"Pairing code for {server_url(brand)} (single use, "
        f"{int(CODE_TTL.total_seconds() // 60)} minutes):"
    )
    click.echo(code)


def amount_option(ctx, param, value):
    """Parse --amount/--balance strictly as money."""
    if value is None:
        return None
    try:
        return parse_amount(value)
    except InvalidAmount as error:
        raise click.BadParameter(str(error)) from error


@click.command("simulate-sms")
@click.option("--provider", required=True, type=click.Choice(PROVIDERS, case_sensitive=False))
@click.option("--amount", required=True, callback=amount_option, help="e.g. 500.00")
@click.option("--trx-id", required=True, help="The provider TrxID the customer will enter.")
@click.option(
    "--from", "sender_number", default="01712345678", show_default=True, help="The payer's number."
)
@click.option(
    "--balance", default=None, callback=amount_option, help="Balance printed in the text."
)
@click.option(
    "--via",
    type=click.Choice(("auto", "http", "local")),
    default="auto",
    show_default=True,
    help="auto: HTTP to BASE_URL when a server answers there, else the ingestion service directly.",
)
def simulate_sms(provider, amount, trx_id, sender_number, balance, via):
    """Forward a real-format provider SMS as a paired phone would, through the ingestion
    endpoint (never in production)."""
    try:
        refuse_in_production()
    except SimulatorRefused as error:
        raise click.ClickException(error.message) from None
    brand = default_brand()
    provider = provider.lower()
    try:
        text = simulated_text(brand, provider, amount, trx_id, sender_number, balance)
    except (TypeError, ValueError) as error:
        raise click.ClickException(str(error)) from error
    try:
        route, status, body = forward_as_device(simulator_device(brand), provider, text, via)
    except requests.RequestException as error:  # --via http, and no gateway answering at BASE_URL
        raise click.ClickException(
            f"No gateway answered at {current_app.config['BASE_URL']} "
            f"({error.__class__.__name__}): start it (`make run`), set BASE_URL to where it runs, "
            "or use --via local."
        ) from None
    click.echo(f"SMS text:\n  {text}")
    click.echo(f"Sent through {route}: HTTP {status}")
    if status != 200 or not body or not body.get("success"):
        raise click.ClickException(f"The gateway refused the SMS: {body}")
    result = body["data"]["results"][0]
    click.echo(f"Result: {result['status']} (server_ref {result['server_ref']})")
    sms = stored_sms(result["server_ref"])
    if sms is not None:
        click.echo(
            f"SMS status: {sms.status}" + (f" ({sms.review_reason})" if sms.review_reason else "")
        )
        if sms.payment is not None:
            click.echo(f"Payment {sms.payment.public_id}: {sms.payment.status}")
