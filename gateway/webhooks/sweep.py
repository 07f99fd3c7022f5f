"""Wake every webhook delivery whose attempt is due again, whatever became of its job (the outbox
sweep).
"""

from .. import jobs
from ..extensions import db
from .models.webhook import DUE_STATUSES, WebhookDelivery

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


def wake_due_deliveries(now):
    """Re-enqueue every due delivery; its job's own claim makes a repeat harmless. Returns the
    count.
    """
    deliveries = due_delivery_ids(now)
    db.session.commit()
    for delivery_id, event_id, attempts in deliveries:
        jobs.enqueue(
            jobs.WEBHOOKS,
            jobs.DELIVER_WEBHOOK,
            delivery_id,
            unique=jobs.delivery_wake(event_id, attempts),
        )
    return len(deliveries)
