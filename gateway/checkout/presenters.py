"""What the checkout pages show: money and times in the brand's format, steps per method, QR
codes."""

from decimal import Decimal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import segno
from flask import current_app
from markupsafe import Markup

from ..clock import utcnow
from ..i18n import lazy_gettext as _l
from ..numerals import clock_time
from ..payments.amounts import BDT, fee_charged
from ..payments.fees import fee_for
from ..payments.methods import provider_name
from ..payments.models.payment import PAID_STATUSES
from ..states import PAYMENT_COMPLETED, PAYMENT_CREATED, PAYMENT_EXPIRED

CURRENCY_SYMBOLS = {"BDT": "৳", "USD": "$", "EUR": "€", "GBP": "£", "INR": "₹"}
# Short USSD codes let a customer on a feature phone pay without the app.
USSD_CODES = {"bkash": "*247#", "nagad": "*167#", "rocket": "*322#", "upay": "*268#"}
# What the provider's app calls the action for each kind of receiving account.
KIND_ACTIONS = {"personal": _l("Send Money"), "agent": _l("Cash Out"), "merchant": _l("Payment")}
KIND_NAMES = {
    "personal": _l("Personal"),
    "agent": _l("Agent"),
    "merchant": _l("Merchant"),
    "manual": _l("Manual payment"),
    "bank": _l("Bank transfer"),
    "api": _l("Pay in the app"),
}
# How each provider's confirmation SMS labels its transaction ID, with one of that shape
# (from real texts: bKash 10 characters, Nagad 8, Rocket 10 digits, Upay 10).
TRX_ID_SHAPES = {
    "bkash": ("TrxID", "9A7B6C5D4E"),
    "nagad": ("TxnID", "752C49K4"),
    "rocket": ("TxnId", "6022415176"),
    "upay": ("TrxID", "01K7C8Z24V"),
}


def format_money(amount, currency):
    """An amount as customers read it: ৳1,500.00, $12.50, or the code for other currencies."""
    text = f"{Decimal(amount):,.2f}"
    symbol = CURRENCY_SYMBOLS.get(currency)
    return f"{symbol}{text}" if symbol else f"{currency} {text}"


def brand_zone(brand):
    """The brand's time zone, falling back to DEFAULT_TIMEZONE when it is not a known zone."""
    for name in (
        getattr(brand, "timezone", None),
        current_app.config.get("DEFAULT_TIMEZONE"),
        "UTC",
    ):
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, TypeError, ValueError):
            continue
    return ZoneInfo("UTC")  # pragma: no cover - UTC always exists


def local_time(moment, brand):
    """A clock time in the brand's zone and the page's language, e.g. 2:35 PM (দুপুর ২:৩৫ in
    Bangla).
    """
    return clock_time(moment, brand_zone(brand))


def seconds_left(payment):
    """Whole seconds until the payment expires, never negative."""
    return max(0, int((payment.expires_at - utcnow()).total_seconds()))


def checkout_state(payment):
    """The page a payment needs: created, processing, completed, cancelled, expired or failed.

    A created payment past its expiry reads as expired before the sweep job gets to it.
    """
    if payment.status == PAYMENT_CREATED and payment.expires_at <= utcnow():
        return PAYMENT_EXPIRED
    if payment.status in PAID_STATUSES:
        return PAYMENT_COMPLETED
    return payment.status


def return_url(base, payment, status):
    """The merchant's URL with ?payment_id=…&status=… (replacing any already there), or None."""
    if not base:
        return None
    parts = urlsplit(base)
    query = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if name not in ("payment_id", "status")
    ]
    query += [("payment_id", payment.public_id), ("status", status)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def qr_svg(number):
    """An inline SVG QR code of the receiving number, scaled by CSS."""
    code = segno.make(number, error="m", micro=False)
    svg = code.svg_inline(
        scale=1,
        border=2,
        dark="#111827",
        light="#ffffff",
        omitsize=True,
        svgclass="qr",
        title=str(_l("QR code of %(number)s", number=number)),
    )
    return Markup(svg.replace("<svg ", '<svg role="img" ', 1))


class MethodCharge:
    """What paying through one method costs the customer, in taka: the amount, the method's fee
    and the total to send (payments/amounts.py fee_charged: amount_bdt + fee)."""

    def __init__(self, payment, method):
        self.amount = payment.amount_bdt
        self.fee = fee_for(method, payment.amount_bdt)
        self.total = fee_charged(payment, self.fee)["amount_paid"]

    @property
    def typed(self):
        """The total as the customer types it in the wallet app: 1018.50."""
        return f"{self.total:.2f}"

    def text(self, amount):
        """A taka amount as the page shows it: ৳1,018.50."""
        return format_money(amount, BDT)


def claimed_fee_texts(payment):
    """(fee, total sent) as the waiting page shows them once a method with a fee was chosen;
    None without a fee."""
    if not payment.fee or payment.amount_paid is None:
        return None
    return format_money(payment.fee, BDT), format_money(payment.amount_paid, BDT)


def method_charges(payment, methods):
    """Per method id, its MethodCharge; empty when the payment has no taka amount (another
    currency without a rate: no SMS can pay it, and no fee is charged)."""
    if payment.amount_bdt is None:
        return {}
    return {method.id: MethodCharge(payment, method) for method in methods}


def method_steps(method, amount_text, reference):
    """The numbered steps for paying to one method, in the page's language."""
    action = KIND_ACTIONS[method.kind]
    steps = [
        _l(
            "Open the %(provider)s app, or dial %(ussd)s.",
            provider=provider_name(method.provider),
            ussd=USSD_CODES[method.provider],
        ),
        _l("Choose “%(action)s”.", action=action),
        _l("Enter the number %(number)s.", number=method.number),
        _l("Enter the amount %(amount)s.", amount=amount_text),
    ]
    if reference:
        steps.append(_l("If asked for a reference, enter %(reference)s.", reference=reference))
    steps += [
        _l("Confirm with your PIN."),
        _l("Enter the TrxID from the confirmation message below."),
    ]
    return steps


def trx_id_help(provider):
    """Where the customer finds the TrxID, with an example shaped like that provider's own."""
    label, example = TRX_ID_SHAPES.get(provider, TRX_ID_SHAPES["bkash"])
    return _l(
        "It is in the confirmation SMS from %(provider)s, after “%(label)s”, e.g. %(example)s.",
        provider=provider_name(provider),
        label=label,
        example=example,
    )
