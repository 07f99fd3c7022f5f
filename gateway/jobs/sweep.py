"""The outbox sweep: wake every due webhook delivery and outbound SMS again, whatever became of its job."""

from flask import current_app

from .. import jobs
from ..clock import utcnow
from ..extensions import db
from ..sms.leases import release_expired_leases
from ..sms.models.outbound_sms import OutboundSms
from ..webhooks.models.webhook import DUE_STATUSES, WebhookDelivery

BATCH = 1000


def due_delivery_ids(now):
    """Deliveries whose next attempt is due and that no live process holds, oldest due first."""
    return db.session.execute(
        db.select(WebhookDelivery.id, WebhookDelivery.event_id, WebhookDelivery.attempts)
        .where(
            WebhookDelivery.status.in_(DUE_STATUSES),
            WebhookDelivery.next_attempt_at <= now,
            db.or_(
                WebhookDelivery.lease_expires_at.is_(None), WebhookDelivery.lease_expires_at < now
            ),
        )
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(BATCH)
    ).all()


def due_sms_ids(now):
    """Queued messages due for the HTTP SMS provider (devices fetch theirs by leasing)."""
    if not current_app.config.get("SMS_PROVIDER_URL"):
        return []
    return db.session.execute(
        db.select(OutboundSms.id, OutboundSms.created_at, OutboundSms.attempts)
        .where(OutboundSms.status == "queued", OutboundSms.next_attempt_at <= now)
        .order_by(OutboundSms.next_attempt_at)
        .limit(BATCH)
    ).all()


def sweep_outbox(now=None):
    """Re-enqueue every due delivery and SMS; the job's own claim makes repeats harmless. Returns the count."""
    now = now or utcnow()
    release_expired_leases(now)
    deliveries, messages = due_delivery_ids(now), due_sms_ids(now)
    db.session.commit()
    for delivery_id, event_id, attempts in deliveries:
        jobs.enqueue(
            jobs.WEBHOOKS,
            jobs.DELIVER_WEBHOOK,
            delivery_id,
            unique=jobs.delivery_wake(event_id, attempts),
        )
    for message_id, created_at, attempts in messages:
        jobs.enqueue(
            jobs.SMS,
            jobs.SEND_SMS,
            message_id,
            unique=jobs.sms_wake(message_id, created_at, attempts),
        )
    return len(deliveries) + len(messages)
