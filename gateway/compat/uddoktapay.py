"""Dialect U (UddoktaPay): its create, verify and refund bodies, its statuses, errors and return."""

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

NAME = "uddoktapay"
TITLE = "UddoktaPay"
KEY_HEADERS = ("RT-UDDOKTAPAY-API-KEY",)
IPN_HEADER = "RT-UDDOKTAPAY-API-KEY"
ID_FIELD = "invoice_id"
REQUIRED = ("full_name", "email", "amount", "metadata", "redirect_url", "cancel_url")
STATUS = {
    "initial": "PENDING",
    "pending": "PENDING",
    "completed": "COMPLETED",
    "refunded": "COMPLETED",
    "failed": "ERROR",
}
DATE = "%Y-%m-%d %H:%M:%S"
# Status codes of our refusals: the plugins read only `status` and `message`.
HTTP = {"INVALID_API_KEY": 401, "INVALID_PP_ID": 404}


def error_response(error):
    """`{"status": false, "message": …}`: what UddoktaPay clients read on a refusal."""
    response = jsonify({"status": False, "message": error.message})
    response.status_code = HTTP.get(error.code, 400)
    return response


def read_create(body, brand):
    """The fields of a payment from a checkout-v2 body; CompatError for what is missing or wrong."""
    absent = missing(body, REQUIRED)
    if absent:
        raise CompatError(
            "MISSING_FIELD", f"Missing required field(s): {', '.join(absent)}", absent
        )
    metadata = parse_metadata(body.get("metadata"))
    return {
        "amount": parse_money(body.get("amount")),
        "currency": parse_currency(body.get("currency"), brand),
        "customer_name": text_field(body.get("full_name"), 200),
        "customer_email": parse_email(body.get("email")),
        "customer_phone": phone_field(body.get("phone")),
        "metadata": metadata,
        "reference": reference_of(metadata),
        "redirect_url": parse_url(body.get("redirect_url"), "redirect_url", required=True),
        "cancel_url": parse_url(body.get("cancel_url"), "cancel_url", required=True),
        "webhook_url": parse_url(body.get("webhook_url"), "webhook_url"),
        "return_type": "GET",
    }


def reference_of(metadata):
    """The merchant's order or invoice number from the metadata plugins send, as our reference."""
    for name in ("invoice_id", "invoiceid", "order_id", "orderid", "invoice", "order"):
        value = text_field(metadata.get(name), 255)
        if value:
            return value
    return None


def created(row, url):
    """The answer to checkout-v2."""
    return {"status": True, "message": "Payment Url", "payment_url": url}


def payment_object(row, ipn_event=None):
    """The verify-payment object (also the IPN body, whose failure status is FAILED)."""
    payment = row.payment
    status = STATUS[generic_status(payment)]
    if ipn_event is not None and status == "ERROR":
        status = "FAILED"
    fee, charged = fee_and_total(payment)
    return {
        "full_name": payment.customer_name,
        "email": payment.customer_email,
        "amount": money(payment.amount),
        "fee": money(fee),
        "charged_amount": money(charged),
        "invoice_id": row.external_id,
        "metadata": payment.metadata_json or {},
        "payment_method": provider_label(payment),
        "sender_number": payment.sender_number,
        "transaction_id": payment.provider_trx_id,
        "date": local_date(payment.completed_at or payment.created_at, payment.brand, DATE),
        "status": status,
    }


def wants_ipn(event):
    """UddoktaPay has no refunded state: a refund changes nothing its clients read."""
    return event != "refund.completed"


def back_query(row):
    """(the merchant URL to return to, the query pairs to add) for this payment's outcome."""
    paid = generic_status(row.payment) in ("completed", "refunded")
    return (row.redirect_url if paid else row.cancel_url), [("invoice_id", row.external_id)]


def refund_fields(body):
    """transaction_id (the provider TrxID) or invoice_id, and an optional amount and reason."""
    if missing(body, ("transaction_id",)) and missing(body, ("invoice_id",)):
        raise CompatError(
            "MISSING_FIELD", "Missing required field(s): transaction_id", ["transaction_id"]
        )
    amount = body.get("amount")
    return {
        "transaction_id": body.get("transaction_id"),
        "invoice_id": body.get("invoice_id"),
        "amount": parse_money(amount) if amount not in (None, "") else None,
        "reason": body.get("reason") or body.get("product_name"),
    }
