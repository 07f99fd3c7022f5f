"""Events: the one place that builds a webhook body, recorded in the caller's database
transaction."""

import json
import secrets
from typing import Any, NamedTuple

from .. import jobs
from ..clock import isoformat, utcnow
from ..extensions import db, reread
from ..money import format_amount
from ..outbox.kind import wake_key
from ..states import OUTBOX_PENDING
from .delivery import OUTBOX
from .models.webhook import WebhookDelivery
from .signals import events_emitted

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


class Emission(NamedTuple):
    """One event's subject, as emit_event takes it: what emit_events takes a list of."""

    brand: Any
    payment: Any = None
    transaction: Any = None
    refund: Any = None
    url: str | None = None
    extra: dict | None = None
    data: dict | None = None


def emit_event(
    event, brand, payment=None, transaction=None, refund=None, url=None, extra=None, data=None
):
    """Add the event's delivery record to the current transaction (no commit) and wake it after
    commit.

    The webhook goes to `url`, else the payment's callback_url, else the brand's webhook_url;
    with none of them nothing is recorded and None is returned. `extra` adds keys to `data`;
    `data`, when given, is the event's `data` as its own domain built it (invoice events).
    """
    (delivery,) = emit_events(
        event, [Emission(brand, payment, transaction, refund, url, extra, data)]
    )
    return delivery


def emit_events(event, emissions):
    """emit_event for several subjects at once (a batch of completions): one re-read of their
    payments, one flush; returns each one's delivery (None where it has no URL), in order.
    """
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    # State changes are guarded UPDATEs that bypass the ORM: read the rows this transaction sees,
    # once, for the listeners (the plugin IPNs) and the deliveries alike.
    reread([e.payment for e in emissions if e.payment is not None])
    events_emitted.send(event, emissions=emissions)
    urls = [
        e.url or (e.payment.callback_url if e.payment is not None else None) or e.brand.webhook_url
        for e in emissions
    ]
    records = []
    for e, url in zip(emissions, urls):
        if not url:
            continue
        transaction = e.transaction or (e.payment.transaction if e.payment is not None else None)
        event_id = new_event_id()
        body = {
            "id": event_id,
            "event": event,
            "created": isoformat(utcnow()),
            "data": e.data
            if e.data is not None
            else {**event_data(e.brand, e.payment, transaction, e.refund), **(e.extra or {})},
        }
        records.append(Record(e.brand, event, url, body, e.payment, transaction, event_id))
    recorded = iter(record_deliveries(records))
    return [next(recorded) if url else None for url in urls]


class Record(NamedTuple):
    """One delivery to add, as record_delivery takes it: what record_deliveries takes a list of."""

    brand: Any
    event: str
    url: str
    body: dict
    payment: Any = None
    transaction: Any = None
    event_id: str | None = None


def record_delivery(brand, event, url, body, payment=None, transaction=None, event_id=None):
    """Add one delivery of `body` (a dict, stored as the exact bytes sent) and wake it after
    commit."""
    record = Record(brand, event, url, body, payment, transaction, event_id)
    (delivery,) = record_deliveries([record])
    return delivery


def record_deliveries(records):
    """record_delivery for several at once: added together, one flush for their ids, each woken
    after commit (jobs.wake_after_commit); returns the deliveries in order."""
    now = utcnow()
    deliveries = [
        WebhookDelivery(
            brand_id=r.brand.id,
            payment_id=r.payment.id if r.payment is not None else None,
            transaction_id=r.transaction.id if r.transaction is not None else None,
            event=r.event,
            event_id=r.event_id or new_event_id(),
            url=r.url,
            payload=json.dumps(r.body, separators=(",", ":"), ensure_ascii=False),
            status=OUTBOX_PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
            updated_at=now,
        )
        for r in records
    ]
    if not deliveries:
        return []
    db.session.add_all(deliveries)
    db.session.flush()
    for delivery in deliveries:
        jobs.wake_after_commit(
            jobs.WEBHOOKS,
            jobs.DELIVER_WEBHOOK,
            delivery.id,
            unique=wake_key(OUTBOX, delivery.id, delivery.created_at, 0),
        )
    return deliveries


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
