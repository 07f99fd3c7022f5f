"""Outbound SMS: queue a message, lease it to a companion device, take its report, retry with
backoff.
"""

from dataclasses import replace
from datetime import timedelta

from flask import current_app

from .. import jobs
from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..devices.brand_devices import is_simulator
from ..domain_errors import field_error, invalid_state, not_found
from ..extensions import db
from ..money import format_amount
from ..outbox.attempts import wake_after_commit
from ..outbox.kind import OutboxKind
from ..outbox.lease import outcome, release_expired, settle, take_lease
from ..outbox.schedule import RetrySchedule
from ..payments.lifecycle import receipt_url
from ..states import OUTBOUND_SMS, OUTBOX_FAILED, OUTBOX_PENDING, write_status
from .models.outbound_sms import OutboundSms

RETRY = RetrySchedule(
    (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=15), timedelta(hours=1))
)
MAX_ATTEMPTS = RETRY.max_attempts  # shown by the panel
SHOP_NAME_IN_SMS = 30
DEVICE_LEASE = timedelta(minutes=5)
OUTBOX = OutboxKind(
    name="sms",
    machine=OUTBOUND_SMS,
    queue=jobs.SMS,
    job=jobs.SEND_SMS,
    schedule=RETRY,
    lease=timedelta(seconds=60),  # the provider's; a phone's is DEVICE_LEASE
    expired_error="Not reported within its lease; returned to the queue.",
    woken=lambda: bool(provider_url()),  # phones fetch theirs by leasing
)
DEVICE = replace(OUTBOX, lease=DEVICE_LEASE)


def provider_url():
    """The HTTP SMS provider's address when one is configured; otherwise devices send the queue."""
    return current_app.config.get("SMS_PROVIDER_URL")


def queue_sms(brand, to_number, body, payment=None, livemode=True):
    """Add a message to the brand's queue in the current transaction, in the mode of what asked for
    it; it is woken after commit."""
    now = utcnow()
    message = OutboundSms(
        brand_id=brand.id,
        livemode=bool(livemode),
        payment_id=payment.id if payment is not None else None,
        to_number=to_number,
        body=body,
        status=OUTBOX_PENDING,
        attempts=0,
        next_attempt_at=now,
        created_at=now,
        updated_at=now,
    )
    db.session.add(message)
    db.session.flush()
    wake_provider(message)
    return message


def wake_provider(message):
    """With an SMS provider, send the message once the transaction commits."""
    if provider_url():
        wake_after_commit(OUTBOX, message)


def queue_receipts(completions):
    """Listener of payments_completed: each completed payment's receipt, in order."""
    for payment, transaction in completions:
        queue_receipt_sms(payment, transaction)


def queue_receipt_sms(payment, transaction):
    """Queue the customer's receipt for a completed payment when the brand has switched receipts
    on; a test payment sends none (test traffic never reaches a real phone)."""
    brand = payment.brand
    if not brand.receipt_sms_enabled or not payment.customer_phone or not payment.livemode:
        return None
    return queue_sms(
        brand,
        payment.customer_phone,
        receipt_text(payment, transaction),
        payment=payment,
        livemode=payment.livemode,
    )


def receipt_text(payment, transaction):
    """The receipt SMS: shop, amount, our reference and the receipt's link, in one or two SMS parts.

    The shop's name is cut to SHOP_NAME_IN_SMS characters so that a long one cannot push the link
    into a third part (the link is what the customer keeps).
    """
    shop = payment.brand.name[:SHOP_NAME_IN_SMS]
    paid, currency = payment.amount_paid, "BDT"
    if paid is None:  # a currency the brand gave no rate for: what the merchant asked
        paid, currency = payment.amount, payment.currency
    return (
        f"{shop}: {format_amount(paid)} {currency} received. Ref {transaction.trx_id}. "
        f"Receipt: {receipt_url(payment)}"
    )


def create_outbound_sms(brand, data, livemode=True):
    """Queue a message the merchant asked for through the API or the panel, in the asker's mode; a
    test text is sent like a live one (docs/test-mode.md: what you ask for is done)."""
    message = queue_sms(brand, data["to"], data["body"], livemode=livemode)
    commit_work()  # with an Idempotency-Key, together with the stored answer
    return message


def list_outbound_sms_query(brand, filters, livemode=True):
    """The brand's outbound messages of one mode, newest first, narrowed by status."""
    query = db.select(OutboundSms).where(
        OutboundSms.brand_id == brand.id, OutboundSms.livemode == bool(livemode)
    )
    if filters.get("status"):
        query = query.where(OutboundSms.shown_status_sql() == filters["status"])
    return query.order_by(OutboundSms.created_at.desc(), OutboundSms.id.desc())


def get_outbound_sms(brand, message_id, livemode=True):
    """A message of this brand and mode by id; NotFound for anything else, another brand's or the
    other mode's included. `livemode=None` takes either mode: the brand's phone, which sends both.
    """
    message_id = row_id(message_id)
    message = None
    if message_id is not None:
        query = db.select(OutboundSms).where(
            OutboundSms.id == message_id, OutboundSms.brand_id == brand.id
        )
        if livemode is not None:
            query = query.where(OutboundSms.livemode == bool(livemode))
        message = db.session.execute(query).scalar_one_or_none()
    if message is None:
        raise not_found("outbound_sms")
    return message


def retry_outbound_sms(brand, message_id, livemode=True):
    """Put a failed message of this mode back in the queue for one more attempt (InvalidState from
    any other status).
    """
    message = get_outbound_sms(brand, message_id, livemode)
    changed = write_status(
        OUTBOUND_SMS,
        (OutboundSms.id == message.id,),
        (OUTBOX_FAILED,),
        OUTBOX_PENDING,
        next_attempt_at=utcnow(),
        updated_at=utcnow(),
    )
    if changed != 1:
        db.session.rollback()
        raise invalid_state(
            f"Only a failed message can be retried; this one is {message.shown_status}."
        )
    wake_provider(message)
    commit_work()
    db.session.refresh(message)
    return message


def lease_outbound_sms(brand, device_ref, limit=10):
    """Lease up to `limit` due messages of either mode to a companion device for 5 minutes (a test
    text is one someone asked for, and is sent); none when a provider sends, and none to the
    simulator, which is no phone.
    """
    if provider_url() or is_simulator(device_ref):
        return []
    now = utcnow()
    release_expired(OUTBOX, now, OutboundSms.brand_id == brand.id)
    candidates = (
        db.session.execute(
            db.select(OutboundSms.id)
            .where(
                OutboundSms.brand_id == brand.id,
                OutboundSms.status == OUTBOX_PENDING,
                OutboundSms.lease_expires_at.is_(None),
                OutboundSms.next_attempt_at <= now,
            )
            .order_by(OutboundSms.next_attempt_at, OutboundSms.id)
            .limit(limit)
        )
        .scalars()
        .all()
    )
    # Another device may win some of these between the SELECT and its UPDATE; it keeps them.
    leased = []
    for message_id in candidates:
        if take_lease(DEVICE, message_id, now, leased_by=device_ref):
            leased.append(message_id)
    db.session.commit()
    if not leased:
        return []
    return (
        db.session.execute(
            db.select(OutboundSms).where(OutboundSms.id.in_(leased)).order_by(OutboundSms.id)
        )
        .scalars()
        .all()
    )


def report_outbound_sms(brand, message_id, status, error=None):
    """Record what the device that leased a message did with it: `sent` or `failed` (InvalidState
    unless leased).
    """
    if status not in ("sent", "failed"):
        raise field_error("status", "Status must be `sent` or `failed`.")
    message = get_outbound_sms(brand, message_id, livemode=None)  # the phone sends both modes
    if status == "failed":
        error = error or "Reported as failed."
    else:
        error = None
    if not settle(
        OUTBOX,
        (OutboundSms.id == message.id, OutboundSms.attempts == message.attempts),
        outcome(RETRY, message.attempts, error, utcnow()),
    ):
        db.session.rollback()
        raise invalid_state(
            f"This message is not leased (it is {message.shown_status}); it cannot be reported."
        )
    db.session.commit()
    db.session.refresh(message)
    return message
