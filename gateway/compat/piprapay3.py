"""Dialect P3 (PipraPay 3.x): checkout/redirect, verify and refund, its statuses, errors and
return."""

from flask import jsonify

from .core import (
    CompatError,
    fee_and_total,
    generic_status,
    local_date,
    missing,
    money,
    parse_currency,
    parse_email,
    parse_metadata,
    parse_money,
    parse_url,
    phone_field,
    provider_label,
    text_field,
)
from .uddoktapay import reference_of

NAME = "piprapay3"
TITLE = "PipraPay 3.x"
KEY_HEADERS = ("MHS-PIPRAPAY-API-KEY", "mh-piprapay-api-key")
IPN_HEADER = "MHS-PIPRAPAY-API-KEY"
ID_FIELD = "pp_id"
REQUIRED = ("full_name", "amount")
STATUS = {
    "initial": "initiated",
    "pending": "pending",
    "completed": "completed",
    "refunded": "refunded",
    "failed": "failed",
}
DATE = "%b %d, %Y %I:%M %p"


def error_response(error):
    """400 `{"error": {"code": …, "message": …}}`."""
    response = jsonify({"error": {"code": error.code, "message": error.message}})
    response.status_code = 400
    return response


def read_create(body, brand):
    """The fields of a payment from a checkout/redirect (or popup) body."""
    absent = missing(body, REQUIRED)
    if missing(body, ("email_address",)) and missing(body, ("mobile_number",)):
        absent.append("email_address")
    if absent:
        raise CompatError(
            "MISSING_FIELD", f"Missing required field(s): {', '.join(absent)}", absent
        )
    metadata = parse_metadata(body.get("metadata"))
    return {
        "amount": parse_money(body.get("amount")),
        "currency": parse_currency(body.get("currency"), brand),
        "customer_name": text_field(body.get("full_name"), 200),
        "customer_email": parse_email(body.get("email_address"), "email_address", required=False),
        "customer_phone": phone_field(body.get("mobile_number")),
        "metadata": metadata,
        "reference": reference_of(metadata),
        "redirect_url": parse_url(body.get("return_url"), "return_url"),
        "cancel_url": None,
        "webhook_url": parse_url(body.get("webhook_url"), "webhook_url"),
        "return_type": "GET",
    }


def created(row, url):
    """The answer to checkout/redirect: pp_id as a string of digits."""
    return {"pp_id": row.external_id, "pp_url": url}


def payment_object(row, ipn_event=None):
    """The verify-payment object, also the refund answer and the IPN body."""
    payment = row.payment
    amount = money(payment.amount)
    fee, total = fee_and_total(payment)
    return {
        "pp_id": row.external_id,
        "full_name": payment.customer_name,
        "email_address": payment.customer_email,
        "mobile_number": payment.customer_phone,
        "gateway": provider_label(payment, with_kind=True),
        "amount": amount,
        "fee": money(fee),
        "discount_amount": "0.00",
        "total": money(total),
        "local_net_amount": money(total),
        "currency": payment.currency,
        "local_currency": payment.currency,
        "metadata": payment.metadata_json or {},
        "sender": payment.sender_number,
        "transaction_id": payment.provider_trx_id,
        "status": STATUS[generic_status(payment)],
        "date": local_date(payment.completed_at or payment.created_at, payment.brand, DATE),
    }


def wants_ipn(event):
    """Every change is told: completed, failed and refunded."""
    return True


def back_query(row):
    """(return_url, pp_status and transaction_ref) whatever the outcome."""
    return row.redirect_url, [
        ("pp_status", STATUS[generic_status(row.payment)]),
        ("transaction_ref", row.external_id),
    ]
