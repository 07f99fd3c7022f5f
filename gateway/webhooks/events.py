"""Events: the one place that builds a webhook body, recorded in the caller's database
transaction."""

import json
import secrets

from .. import jobs
from ..clock import isoformat, utcnow
from ..extensions import db
from ..money import format_amount
from .models.webhook import WebhookDelivery
from .signals import event_emitted

PAYMENT_EVENTS = (
    "payment.completed",
    "payment.cancelled",
    "payment.expired",
    "payment.failed",
    "refund.completed",
)
# A payment made through a payment link (gateway/links) was completed; data adds `payment_link`.
LINK_EVENTS = ("payment_link.paid",)
INVOICE_EVENTS = ("invoice.paid", "invoice.overdue")  # their `data` is built by gateway/invoices
EVENTS = PAYMENT_EVENTS + LINK_EVENTS + INVOICE_EVENTS + ("webhook.test",)


def new_event_id():
    """A unique event id, `evt_` + 96 random bits in hex; receivers use it to drop repeats."""
    return "evt_" + secrets.token_hex(12)


def emit_event(
    event, brand, payment=None, transaction=None, refund=None, url=None, extra=None, data=None
):
    """Add the event's delivery record to the current transaction (no commit) and wake it after
    commit.

    The webhook goes to `url`, else the payment's callback_url, else the brand's webhook_url;
    with none of them nothing is recorded and None is returned. `extra` adds keys to `data`;
    `data`, when given, is the event's `data` as its own domain built it (invoice events).
    """
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    event_emitted.send(event, brand=brand, payment=payment, transaction=transaction, refund=refund)
    url = url or (payment.callback_url if payment is not None else None) or brand.webhook_url
    if not url:
        return None
    if payment is not None:
        # State changes are guarded UPDATEs that bypass the ORM: read the row this transaction sees.
        db.session.refresh(payment)
    transaction = transaction or (payment.transaction if payment is not None else None)
    event_id = new_event_id()
    body = {
        "id": event_id,
        "event": event,
        "created": isoformat(utcnow()),
        "data": data
        if data is not None
        else {**event_data(brand, payment, transaction, refund), **(extra or {})},
    }
    return record_delivery(brand, event, url, body, payment, transaction, event_id)


def record_delivery(brand, event, url, body, payment=None, transaction=None, event_id=None):
    """Add one delivery of `body` (a dict, stored as the exact bytes sent) and wake it after
    commit."""
    now = utcnow()
    event_id = event_id or new_event_id()
    delivery = WebhookDelivery(
        brand_id=brand.id,
        payment_id=payment.id if payment is not None else None,
        transaction_id=transaction.id if transaction is not None else None,
        event=event,
        event_id=event_id,
        url=url,
        payload=json.dumps(body, separators=(",", ":"), ensure_ascii=False),
        status="pending",
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
    )
    db.session.add(delivery)
    db.session.flush()
    jobs.wake_after_commit(
        jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, delivery.id, unique=jobs.delivery_wake(event_id, 0)
    )
    return delivery


def event_data(brand, payment, transaction, refund):
    """`data` of an event: the payment as the merchant's plugins expect it, or a test notice."""
    if payment is None:
        return {
            "message": "A test event: your endpoint receives and verifies webhooks.",
            "brand": brand.name,
        }
    data = {
        "payment_id": payment.public_id,
        "trx_id": transaction.trx_id if transaction is not None else None,
        "reference": payment.reference,
        "status": payment.status,
        "amount": format_amount(payment.amount),
        "currency": payment.currency,
        "metadata": payment.metadata_json,
    }
    if refund is not None:
        data["amount_refunded"] = format_amount(payment.amount_refunded)
        data["refund"] = {
            "id": refund.id,
            "amount": format_amount(refund.amount),
            "reason": refund.reason,
            "status": refund.status,
            "created_at": isoformat(refund.created_at),
        }
    return data
