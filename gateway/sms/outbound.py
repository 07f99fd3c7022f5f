"""Outbound SMS: queue a message, lease it to a companion device, take its report, retry with
backoff.
"""

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
from ..states import OUTBOUND_SMS, write_status
from .leases import (  # noqa: F401 - the queue's limits, shown by the panel
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    outcome_values,
    release_expired_leases,
    settle_lease,
    take_lease,
)
from .models.outbound_sms import OutboundSms

DEVICE_LEASE = timedelta(minutes=5)


def provider_url():
    """The HTTP SMS provider's address when one is configured; otherwise devices send the queue."""
    return current_app.config.get("SMS_PROVIDER_URL")


def queue_sms(brand, to_number, body, payment=None):
    """Add a message to the brand's queue in the current transaction; it is woken after commit."""
    now = utcnow()
    message = OutboundSms(
        brand_id=brand.id,
        payment_id=payment.id if payment is not None else None,
        to_number=to_number,
        body=body,
        status="queued",
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
        jobs.wake_after_commit(
            jobs.SMS,
            jobs.SEND_SMS,
            message.id,
            unique=jobs.sms_wake(message.id, message.created_at, message.attempts),
        )


def queue_receipts(completions):
    """Listener of payments_completed: each completed payment's receipt, in order."""
    for payment, transaction in completions:
        queue_receipt_sms(payment, transaction)


def queue_receipt_sms(payment, transaction):
    """Queue the customer's receipt for a completed payment when the brand has switched receipts
    on."""
    brand = payment.brand
    if not brand.receipt_sms_enabled or not payment.customer_phone:
        return None
    body = (
        f"{brand.name}: payment of {format_amount(payment.amount)} {payment.currency} received. "
        f"Ref {transaction.trx_id}. Thank you."
    )
    return queue_sms(brand, payment.customer_phone, body[:1000], payment=payment)


def create_outbound_sms(brand, data):
    """Queue a message the merchant asked for through the API."""
    message = queue_sms(brand, data["to"], data["body"])
    commit_work()  # with an Idempotency-Key, together with the stored answer
    return message


def list_outbound_sms_query(brand, filters):
    """The brand's outbound messages, newest first, narrowed by status."""
    query = db.select(OutboundSms).where(OutboundSms.brand_id == brand.id)
    if filters.get("status"):
        query = query.where(OutboundSms.status == filters["status"])
    return query.order_by(OutboundSms.created_at.desc(), OutboundSms.id.desc())


def get_outbound_sms(brand, message_id):
    """A message of this brand by id; NotFound for anything else, another brand's included."""
    message_id = row_id(message_id)
    message = None
    if message_id is not None:
        message = db.session.execute(
            db.select(OutboundSms).where(
                OutboundSms.id == message_id, OutboundSms.brand_id == brand.id
            )
        ).scalar_one_or_none()
    if message is None:
        raise not_found("outbound_sms")
    return message


def retry_outbound_sms(brand, message_id):
    """Put a failed message back in the queue for one more attempt (InvalidState from any other
    status).
    """
    message = get_outbound_sms(brand, message_id)
    changed = write_status(
        OUTBOUND_SMS,
        (OutboundSms.id == message.id,),
        ("failed",),
        "queued",
        next_attempt_at=utcnow(),
        updated_at=utcnow(),
    )
    if changed != 1:
        db.session.rollback()
        raise invalid_state(f"Only a failed message can be retried; this one is {message.status}.")
    wake_provider(message)
    commit_work()
    db.session.refresh(message)
    return message


def lease_outbound_sms(brand, device_ref, limit=10):
    """Lease up to `limit` due messages to a companion device for 5 minutes; none when a provider
    sends, and none to the simulator, which is no phone.
    """
    if provider_url() or is_simulator(device_ref):
        return []
    now = utcnow()
    release_expired_leases(now, brand.id)
    candidates = (
        db.session.execute(
            db.select(OutboundSms.id)
            .where(
                OutboundSms.brand_id == brand.id,
                OutboundSms.status == "queued",
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
        if take_lease(message_id, device_ref, now + DEVICE_LEASE, now):
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
    message = get_outbound_sms(brand, message_id)
    now = utcnow()
    if not settle_lease(
        (OutboundSms.id == message.id, OutboundSms.attempts == message.attempts),
        outcome_values(message.attempts, status, error, now),
    ):
        db.session.rollback()
        raise invalid_state(
            f"This message is not leased (it is {message.status}); it cannot be reported."
        )
    db.session.commit()
    db.session.refresh(message)
    return message
