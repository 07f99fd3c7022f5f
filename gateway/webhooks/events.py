"""Events: the one place that builds a webhook body; each event is stored (the events API) with
its deliveries, in the caller's database transaction."""

import json
import secrets
from typing import Any, NamedTuple

from .. import jobs
from ..clock import isoformat, utcnow
from ..extensions import db, reread
from ..money import format_amount, plain_decimal
from ..outbox.kind import wake_key
from ..states import OUTBOX_PENDING
from .delivery import OUTBOX
from .models.endpoint import WebhookEndpoint
from .models.event import Event
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
    """One event's subject, as emit_event takes it: what emit_events takes a list of.

    `livemode` is the subject's (its payment's), given only where there is no payment: an overdue
    invoice's, the calling key's for webhook.test.
    """

    brand: Any
    payment: Any = None
    transaction: Any = None
    refund: Any = None
    url: str | None = None
    extra: dict | None = None
    data: dict | None = None
    livemode: bool | None = None


def emit_event(
    event,
    brand,
    payment=None,
    transaction=None,
    refund=None,
    url=None,
    extra=None,
    data=None,
    livemode=None,
):
    """Store the event and add its delivery records to the current transaction (no commit); wake
    them after commit.

    The webhook goes to `url`, else the payment's callback_url, else the brand's webhook_url, and
    to every enabled endpoint of the brand and mode that chose the event; the first of these is
    returned (None without one: the event is stored all the same). `extra` adds keys to `data`;
    `data`, when given, is the event's `data` as its own domain built it (invoice events).
    """
    emission = Emission(brand, payment, transaction, refund, url, extra, data, livemode)
    (delivery,) = emit_events(event, [emission])
    return delivery


def emit_events(event, emissions):
    """emit_event for several subjects at once (a batch of completions): one re-read of their
    payments, one read of the brands' endpoints, one flush; returns each one's delivery to its URL
    (None where it has none), in order.
    """
    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    # State changes are guarded UPDATEs that bypass the ORM: read the rows this transaction sees,
    # once, for the listeners (the plugin IPNs) and the deliveries alike.
    reread([e.payment for e in emissions if e.payment is not None])
    events_emitted.send(event, emissions=emissions)
    endpoints = endpoints_choosing(event, {e.brand.id for e in emissions})
    now = utcnow()
    stored, records, own = [], [], []  # own: each emission's URL delivery, by place in records
    for e in emissions:
        url = e.url or (e.payment.callback_url if e.payment is not None else None)
        url = url or e.brand.webhook_url
        transaction = e.transaction or (e.payment.transaction if e.payment is not None else None)
        livemode = livemode_of(e)
        body = {
            "id": new_event_id(),
            "event": event,
            "created": isoformat(now),
            "livemode": livemode,
            "data": e.data
            if e.data is not None
            else {**event_data(e.brand, e.payment, transaction, e.refund), **(e.extra or {})},
        }
        payload = dumps(body)
        stored.append(
            Event(
                public_id=body["id"],
                brand_id=e.brand.id,
                type=event,
                livemode=livemode,
                payload=payload,
                created_at=now,
            )
        )
        subject = (e.brand, event)
        own.append(len(records) if url else None)
        if url:
            records.append(
                Record(*subject, url, payload, e.payment, transaction, body["id"], None, livemode)
            )
        records.extend(
            Record(
                *subject,
                endpoint.url,
                payload,
                e.payment,
                transaction,
                body["id"],
                endpoint,
                livemode,
            )
            for endpoint in endpoints
            if endpoint.brand_id == e.brand.id and endpoint.livemode == livemode
        )
    db.session.add_all(stored)
    deliveries = record_deliveries(records)
    return [None if place is None else deliveries[place] for place in own]


def livemode_of(emission):
    """The event's mode: its payment's (a refund, link or invoice payment is its payment's), else
    the one given, else live."""
    if emission.payment is not None:
        return bool(emission.payment.livemode)
    return True if emission.livemode is None else bool(emission.livemode)


def endpoints_choosing(event, brand_ids):
    """The enabled endpoints of these brands that chose `event`, in one query."""
    found = db.session.execute(
        db.select(WebhookEndpoint).where(
            WebhookEndpoint.brand_id.in_(brand_ids),
            WebhookEndpoint.enabled.is_(True),
            WebhookEndpoint.deleted_at.is_(None),
        )
    ).scalars()
    return [endpoint for endpoint in found if endpoint.wants(event)]


def dumps(body):
    """The exact bytes sent (as text): compact JSON, stored once and signed at every attempt."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


class Record(NamedTuple):
    """One delivery to add, as record_delivery takes it: what record_deliveries takes a list of.

    `body` is a dict, or the payload already serialised; `endpoint` is the webhook endpoint it goes
    to (None for a URL signed with the brand's secret); `livemode` is the event's (default: the
    payment's, else live).
    """

    brand: Any
    event: str
    url: str
    body: Any
    payment: Any = None
    transaction: Any = None
    event_id: str | None = None
    endpoint: Any = None
    livemode: bool | None = None


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
            endpoint_id=r.endpoint.id if r.endpoint is not None else None,
            livemode=record_livemode(r),
            url=r.url,
            payload=r.body if isinstance(r.body, str) else dumps(r.body),
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


def record_livemode(record):
    """A delivery's mode: its event's, else its payment's (a plugin's IPN), else live."""
    if record.livemode is not None:
        return bool(record.livemode)
    return bool(record.payment.livemode) if record.payment is not None else True


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
        # In taka at the rate fixed at creation (payments/amounts.py; no rate: both null).
        "amount_bdt": format_amount(payment.amount_bdt),
        "exchange_rate": plain_decimal(payment.exchange_rate),
        "metadata": payment.metadata_json,
        # In taka (gateway/payments/amounts.py): the chosen method's fee and what the customer sent.
        "fee": format_amount(payment.fee),
        "amount_paid": format_amount(payment.amount_paid),
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
