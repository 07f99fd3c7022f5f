"""The shared core of the dialects: errors, ids, statuses, dates and the payment operations they
call.
"""

import json
import secrets
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import current_app
from sqlalchemy.exc import IntegrityError

from ..accounts.models.brand import Brand
from ..answer_commit import unit_of_work
from ..db_types import UNSTORABLE_MESSAGE, unstorable
from ..domain_errors import DomainError, InvalidState, RefundExceedsRemaining, ValidationFailed
from ..extensions import db
from ..money import InvalidAmount, format_amount, parse_amount
from ..payments.lifecycle import checkout_url, create_payment
from ..payments.methods import normalize_mobile_number, provider_name
from ..payments.models.payment import PAID_STATUSES, Payment
from ..payments.models.payment_method import ACCOUNT_PROVIDERS, API, PaymentMethod
from ..payments.refunds import create_refund
from ..states import (
    PAYMENT_CANCELLED,
    PAYMENT_COMPLETED,
    PAYMENT_CREATED,
    PAYMENT_EXPIRED,
    PAYMENT_FAILED,
    PAYMENT_PARTIALLY_REFUNDED,
    PAYMENT_PROCESSING,
    PAYMENT_REFUNDED,
)
from ..wallets import completing_wallet_payment
from ..webhooks.callback_urls import check_callback_url
from .models.compat import CompatPayment

METADATA_MAX_CHARS = 4000
# Our statuses in the words every dialect maps from (docs/spec/COMPAT.md, "Statuses").
GENERIC_STATUS = {
    PAYMENT_CREATED: "initial",
    PAYMENT_PROCESSING: "pending",
    PAYMENT_COMPLETED: "completed",
    PAYMENT_PARTIALLY_REFUNDED: "completed",
    PAYMENT_REFUNDED: "refunded",
    PAYMENT_CANCELLED: "failed",
    PAYMENT_EXPIRED: "failed",
    PAYMENT_FAILED: "failed",
}


class CompatError(Exception):
    """A refusal a dialect renders in its own shape; `code` is the PipraPay 3 code naming it."""

    def __init__(self, code, message, fields=()):
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = list(fields)


def generic_status(payment):
    """initial, pending, completed, refunded or failed: what each dialect maps from."""
    return GENERIC_STATUS[payment.status]


def money(amount):
    """An amount as the dialects answer it: a string with two decimals."""
    return format_amount(amount if amount is not None else 0)


def fee_and_total(payment):
    """(fee, amount + fee) in the payment's currency, as the dialects' `fee` and `total` mean
    them: a BDT payment's method fee and amount_paid (payments/amounts.py); for another
    currency, whose fee is in taka, no fee in that currency and its amount."""
    if payment.currency == "BDT" and payment.amount_paid is not None:
        return payment.fee or 0, payment.amount_paid
    return 0, payment.amount


def brand_zone(brand):
    """The brand's time zone, else DEFAULT_TIMEZONE, else UTC."""
    for name in (brand.timezone, current_app.config.get("DEFAULT_TIMEZONE"), "UTC"):
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, TypeError, ValueError):
            continue
    return ZoneInfo("UTC")  # pragma: no cover - UTC always exists


def local_date(moment, brand, pattern):
    """A moment in the brand's zone, formatted for a dialect (C-locale month names)."""
    return moment.astimezone(brand_zone(brand)).strftime(pattern) if moment else None


def provider_label(payment, with_kind=False):
    """bkash / `bKash Personal` / `bKash API` / `Bank`: how the dialects name the method a payment
    was paid with (with_kind: the wallet's API when it paid, a manual or bank method by its kind,
    else the kind of the brand's numbers)."""
    if not payment.provider:
        return None
    if not with_kind:
        return payment.provider
    name = provider_name(payment.provider)
    if payment.provider in ACCOUNT_PROVIDERS:
        return name  # a manual or bank method: its kind is its name
    if completing_wallet_payment(payment.id) is not None:
        return f"{name} API"
    # An SMS paid it: the kind of the number it was sent to, when the brand's numbers of that
    # provider agree on one (its API method, paid on the wallet's page, is none of them).
    kinds = (
        db.session.execute(
            db.select(PaymentMethod.kind).where(
                PaymentMethod.brand_id == payment.brand_id,
                PaymentMethod.provider == payment.provider,
                PaymentMethod.kind != API,
            )
        )
        .scalars()
        .all()
    )
    kind = kinds[0] if len(set(kinds)) == 1 else "personal"
    return f"{name} {kind.capitalize()}"


def parse_money(value, field="amount"):
    """A positive Decimal amount within MAX_AMOUNT from a JSON number or string; INVALID_AMOUNT
    else.
    """
    try:
        amount = parse_amount(value.strip() if isinstance(value, str) else value)
    except InvalidAmount as error:
        raise CompatError("INVALID_AMOUNT", f"Invalid {field}: {error}", [field]) from error
    if amount <= 0 or amount > Decimal(str(current_app.config["MAX_AMOUNT"])):
        raise CompatError("INVALID_AMOUNT", f"Invalid {field}: out of range.", [field])
    return amount


def parse_metadata(value):
    """A metadata object (or a JSON string of one), kept verbatim if it is small enough."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as error:
            raise CompatError(
                "INVALID_METADATA", "metadata is not valid JSON.", ["metadata"]
            ) from error
        if unstorable(value):  # the body's check saw only the text, not what it decodes to
            raise CompatError("INVALID_METADATA", f"metadata: {UNSTORABLE_MESSAGE}", ["metadata"])
    if not isinstance(value, dict):
        raise CompatError("INVALID_METADATA", "metadata must be an object.", ["metadata"])
    if len(json.dumps(value, ensure_ascii=False)) > METADATA_MAX_CHARS:
        raise CompatError("INVALID_METADATA", "metadata is too large.", ["metadata"])
    return value


def parse_email(value, field="email", required=True):
    """A plausible e-mail address or None; INVALID_EMAIL for anything else."""
    value = value.strip() if isinstance(value, str) else value
    if not value:
        if required:
            raise CompatError("MISSING_FIELD", f"{field} is required.", [field])
        return None
    if not isinstance(value, str) or len(value) > 254 or value.count("@") != 1:
        raise CompatError("INVALID_EMAIL", f"{field} is not a valid e-mail address.", [field])
    local, _, domain = value.partition("@")
    if not local or "." not in domain or any(c.isspace() for c in value):
        raise CompatError("INVALID_EMAIL", f"{field} is not a valid e-mail address.", [field])
    return value


def parse_url(value, field, required=False):
    """An http(s) URL of at most 2048 characters, or None; INVALID_URL else."""
    if value is None or value == "":
        if required:
            raise CompatError("MISSING_FIELD", f"{field} is required.", [field])
        return None
    if (
        not isinstance(value, str)
        or len(value) > 2048
        or not value.lower().startswith(("http://", "https://"))
        or any(c.isspace() for c in value)
    ):
        raise CompatError("INVALID_URL", f"{field} must be an http(s) URL.", [field])
    return value


def parse_currency(value, brand):
    """The currency (default BDT) if the brand accepts it; INVALID_CURRENCY else."""
    currency = (value or "BDT") if isinstance(value, (str, type(None))) else None
    currency = currency.strip().upper() if currency else None
    if not currency or currency not in brand.currency_list:
        raise CompatError(
            "INVALID_CURRENCY",
            f"Currency must be one of {', '.join(brand.currency_list)}.",
            ["currency"],
        )
    return currency


def text_field(value, limit):
    """A short text value or None (numbers accepted as text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    return value.strip()[:limit] or None if isinstance(value, str) else None


def phone_field(value):
    """A Bangladeshi mobile number as 01XXXXXXXXX, or None."""
    text = text_field(value, 20)
    return normalize_mobile_number(text) if text else None


def missing(body, names):
    """The names of required fields absent or empty in the body, in the order given."""
    return [name for name in names if body.get(name) in (None, "", [])]


def new_external_id(brand, dialect):
    """A dialect payment id free for this brand: 20 letters/digits for U, 10 digits for PipraPay."""
    for _ in range(10):
        if dialect == "uddoktapay":
            candidate = secrets.token_hex(10).upper()
        else:
            candidate = str(secrets.randbelow(9 * 10**9) + 10**9)
        taken = db.session.execute(
            db.select(CompatPayment.id).where(
                CompatPayment.brand_id == brand.id,
                CompatPayment.dialect == dialect,
                CompatPayment.external_id == candidate,
            )
        ).first()
        if taken is None:
            return candidate
    raise RuntimeError("no free dialect id")  # pragma: no cover - 10 collisions in 9e9


def return_address(brand, token):
    """Our own return page, which sends the customer on in the dialect's way."""
    base = brand.base_url or current_app.config["BASE_URL"]
    return f"{base.rstrip('/')}/compat/return/{token}"


def create_dialect_payment(key, fields):
    """Create a payment through the native lifecycle and its dialect row, in one commit.

    `fields`: amount, currency, customer_name, customer_email, customer_phone, metadata, reference,
    redirect_url, cancel_url, webhook_url, return_type. The payment is of the key's mode.
    """
    brand = key.brand
    try:
        check_callback_url(fields.get("webhook_url"), "webhook_url")
    except ValidationFailed as error:
        raise CompatError(
            "INVALID_URL", f"webhook_url: {error.message}", ["webhook_url"]
        ) from error
    token = secrets.token_urlsafe(24)
    back = return_address(brand, token)
    has_return = bool(fields.get("redirect_url") or fields.get("cancel_url"))
    try:
        with unit_of_work():
            payment = create_payment(
                brand,
                {
                    "amount": fields["amount"],
                    "currency": fields["currency"],
                    "reference": fields.get("reference"),
                    "customer_name": fields.get("customer_name"),
                    "customer_mail": fields.get("customer_email"),
                    "customer_phone": fields.get("customer_phone"),
                    "metadata": fields.get("metadata"),
                    "redirect_url": back if has_return else None,
                    "cancel_url": back if has_return else None,
                },
                livemode=key.livemode,
            )
            row = insert_dialect_row(
                brand_id=brand.id,
                payment_id=payment.id,
                key_id=key.id,
                dialect=key.dialect,
                return_token=token,
                redirect_url=fields.get("redirect_url"),
                cancel_url=fields.get("cancel_url"),
                webhook_url=fields.get("webhook_url"),
                return_type=fields.get("return_type") or "GET",
            )
    except ValidationFailed as error:
        field = (error.errors or [{}])[0].get("field", "body")
        code = "INVALID_CURRENCY" if field == "currency" else "INVALID_REQUEST"
        raise CompatError(code, error.message, [field]) from error
    return row, checkout_url(payment)


def insert_dialect_row(**values):
    """Insert the dialect row with a free id; a rival that took the same id meanwhile makes it draw
    again.
    """
    for attempt in range(3):
        row = CompatPayment(
            external_id=new_external_id(
                db.session.get(Brand, values["brand_id"]), values["dialect"]
            ),
            **values,
        )
        try:
            with db.session.begin_nested():  # only this insert is undone on a clash
                db.session.add(row)
                db.session.flush()
            return row
        except IntegrityError:
            if attempt == 2:
                raise
    return None  # pragma: no cover - the loop returns or raises


def of_key_mode(query, key):
    """The query narrowed to dialect rows whose payment is of the key's mode (live or test): any
    other is as unknown as another brand's."""
    return query.join(Payment, Payment.id == CompatPayment.payment_id).where(
        Payment.livemode == key.livemode
    )


def find_dialect_payment(key, external_id, field):
    """The key's brand's payment of this dialect and mode by its dialect id; INVALID_PP_ID
    (unknown) else."""
    text = text_field(external_id, 41)
    row = None
    if text and len(text) <= 40:
        query = db.select(CompatPayment).where(
            CompatPayment.brand_id == key.brand_id,
            CompatPayment.dialect == key.dialect,
            CompatPayment.external_id == text,
        )
        row = db.session.execute(of_key_mode(query, key)).scalar_one_or_none()
    if row is None:
        raise CompatError("INVALID_PP_ID", f"No payment with that {field}.", [field])
    db.session.refresh(row.payment)
    return row


def find_by_provider_trx(key, trx_id):
    """The key's brand's payment of this dialect and mode paid with the provider TrxID;
    INVALID_PP_ID else."""
    text = text_field(trx_id, 64)
    row = None
    if text:
        query = db.select(CompatPayment).where(
            CompatPayment.brand_id == key.brand_id,
            CompatPayment.dialect == key.dialect,
            Payment.provider_trx_id == text.upper(),
        )
        row = db.session.execute(
            of_key_mode(query, key).order_by(CompatPayment.id.desc()).limit(1)
        ).scalar_one_or_none()
    if row is None:
        raise CompatError(
            "INVALID_PP_ID", "No payment with that transaction_id.", ["transaction_id"]
        )
    return row


def refund_dialect_payment(row, amount=None, reason=None, asked_by=None):
    """Refund (all of, or `amount` of) a paid payment through the native refunds, audited as
    `asked_by`'s (the key, "Compatibility key #3") as the API's refunds are; REFUND_FAILED else.
    """
    payment = row.payment
    if payment.status not in PAID_STATUSES or payment.transaction is None:
        raise CompatError(
            "REFUND_FAILED",
            f"Only a completed payment can be refunded; this one is {payment.status}.",
        )
    try:
        create_refund(
            row.payment.brand,
            payment.transaction.trx_id,
            amount,
            text_field(reason, 500),
            livemode=payment.livemode,  # found by the key, so of the key's mode
            asked_by=asked_by,
            audit_extra={"via": "compat"},
        )
    except (InvalidState, RefundExceedsRemaining) as error:
        raise CompatError("REFUND_FAILED", error.message, ["amount"]) from error
    except DomainError as error:
        raise CompatError("REFUND_FAILED", error.message) from error
    db.session.refresh(payment)
    return row
