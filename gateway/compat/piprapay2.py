"""Dialect P2 (PipraPay 2.x): create-charge, verify-payments, its statuses, errors and return."""

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

NAME = "piprapay2"
TITLE = "PipraPay 2.x"
KEY_HEADERS = ("mh-piprapay-api-key",)
IPN_HEADER = "mh-piprapay-api-key"
ID_FIELD = "pp_id"
REQUIRED = ("full_name", "email_mobile", "amount", "redirect_url", "cancel_url", "webhook_url")
STATUS = {
    "pending": "pending",
    "completed": "completed",
    "refunded": "refunded",
    "failed": "failed",
}
DATE = "%Y-%m-%d %H:%M:%S"
MESSAGES = {
    "INVALID_API_KEY": "Unauthorized request. Invalid API key.",
    "INVALID_PP_ID": "Invalid Transaction",
}


def error_response(error):
    """400 `{"status": false, "message": …}`, with PipraPay 2's own wording where it has one."""
    response = jsonify({"status": False, "message": MESSAGES.get(error.code, error.message)})
    response.status_code = 400
    return response


def read_create(body, brand):
    """The fields of a payment from a create-charge body."""
    absent = missing(body, REQUIRED)
    if absent:
        raise CompatError(
            "MISSING_FIELD", f"Missing required field(s): {', '.join(absent)}", absent
        )
    contact = text_field(body.get("email_mobile"), 254) or ""
    phone = phone_field(contact)
    email = None if phone else parse_email(contact, "email_mobile")
    return_type = (text_field(body.get("return_type"), 4) or "GET").upper()
    if return_type not in ("GET", "POST"):
        raise CompatError("INVALID_REQUEST", "return_type must be GET or POST.", ["return_type"])
    metadata = parse_metadata(body.get("metadata"))
    return {
        "amount": parse_money(body.get("amount")),
        "currency": parse_currency(body.get("currency"), brand),
        "customer_name": text_field(body.get("full_name"), 200),
        "customer_email": email,
        "customer_phone": phone,
        "metadata": metadata,
        "reference": reference_of(metadata),
        "redirect_url": parse_url(body.get("redirect_url"), "redirect_url", required=True),
        "cancel_url": parse_url(body.get("cancel_url"), "cancel_url", required=True),
        "webhook_url": parse_url(body.get("webhook_url"), "webhook_url", required=True),
        "return_type": return_type,
    }


def created(row, url):
    """The answer to create-charge: pp_id is an integer."""
    return {"status": True, "pp_id": int(row.external_id), "pp_url": url}


def payment_object(row, ipn_event=None):
    """The verify-payments object, also the IPN body; a payment not yet started is unknown."""
    payment = row.payment
    generic = generic_status(payment)
    if generic == "initial" and ipn_event is None:
        raise CompatError("INVALID_PP_ID", "Invalid Transaction", ["pp_id"])
    refunded = payment.amount_refunded or 0
    fee, total = fee_and_total(payment)
    return {
        "pp_id": int(row.external_id),
        "customer_name": payment.customer_name,
        "customer_email_mobile": payment.customer_email or payment.customer_phone,
        "payment_method": provider_label(payment, with_kind=True),
        "amount": money(payment.amount),
        "fee": money(fee),
        "refund_amount": money(refunded),
        "total": money(total - refunded),  # amount + fee − refund
        "currency": payment.currency,
        "metadata": payment.metadata_json or {},
        "sender_number": payment.sender_number,
        "transaction_id": payment.provider_trx_id,
        "status": STATUS.get(generic, "failed"),
        "date": local_date(payment.completed_at or payment.created_at, payment.brand, DATE),
    }


def wants_ipn(event):
    """Every change is told: completed, failed and refunded."""
    return True


def back_query(row):
    """(the merchant URL to return to, the query pairs to add) for this payment's outcome."""
    paid = generic_status(row.payment) in ("completed", "refunded")
    return (row.redirect_url if paid else row.cancel_url), [("pp_id", row.external_id)]
