"""Wake every outbound SMS due for the HTTP provider again, and return expired leases (the outbox
sweep).
"""

from flask import current_app

from .. import jobs
from ..extensions import db
from .leases import release_expired_leases
from .models.outbound_sms import OutboundSms

BATCH = 1000


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


def wake_due_messages(now):
    """Return expired leases, then re-enqueue every due message; the job's claim makes repeats
    harmless.
    """
    release_expired_leases(now)
    messages = due_sms_ids(now)
    db.session.commit()
    for message_id, created_at, attempts in messages:
        jobs.enqueue(
            jobs.SMS,
            jobs.SEND_SMS,
            message_id,
            unique=jobs.sms_wake(message_id, created_at, attempts),
        )
    return len(messages)
