"""Sending the outbox: claim a due delivery with a lease, send it, record sent or the next retry."""

import logging
from datetime import timedelta

from flask import current_app

from .. import jobs
from ..clock import utcnow
from ..extensions import db
from ..states import write_status
from .channels import SENDERS, ChannelError
from .models.notification import NotificationDelivery
from .outbox import NOTIFICATION_DELIVERY, SEND_NOTIFICATION, notification_wake
from .settings import settings_for

log = logging.getLogger(__name__)

RETRY_DELAYS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=6),
)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE = timedelta(seconds=60)
BATCH = 500


def send_notification(delivery_id):
    """Make the next attempt of a due delivery if this process wins its lease; True when it was
    sent.
    """
    now = utcnow()
    table = NotificationDelivery.__table__.c
    lease = now + LEASE
    won = write_status(
        NOTIFICATION_DELIVERY,
        (
            table.id == delivery_id,
            table.next_attempt_at <= now,
            db.or_(table.lease_expires_at.is_(None), table.lease_expires_at < now),
        ),
        ("pending",),
        "pending",
        lease_expires_at=lease,
        attempts=table.attempts + 1,
        updated_at=now,
    )
    db.session.commit()
    if won != 1:
        return None
    delivery = db.session.get(NotificationDelivery, delivery_id)
    error = attempt(delivery)
    return record(delivery, lease, error)


def attempt(delivery):
    """Send through the delivery's channel; None when it went, else the ChannelError (no
    secrets)."""
    try:
        SENDERS[delivery.channel](settings_for(delivery.brand_id), delivery.notification)
    except ChannelError as error:
        return error
    except Exception as error:  # noqa: BLE001 - a broken channel is a failed attempt, retried
        log.exception("notification delivery %s: %s failed", delivery.id, delivery.channel)
        return ChannelError(f"Unexpected error ({type(error).__name__}).")
    return None


def retry_delay(attempts):
    """How long after attempt number `attempts` the next one is made (scaled for tests)."""
    return RETRY_DELAYS[attempts - 1] * current_app.config.get("NOTIFICATION_RETRY_SCALE", 1)


def record(delivery, lease, error):
    """Sent, failed for good, or pending again after the backoff; only while this process holds the
    lease.
    """
    now, table = utcnow(), NotificationDelivery.__table__.c
    attempts, delivery_id = delivery.attempts, delivery.id
    where = (table.id == delivery_id, table.lease_expires_at == lease)
    if error is None:
        to, values = "sent", {"sent_at": now, "last_error": None, "next_attempt_at": None}
    elif attempts >= MAX_ATTEMPTS:
        to, values = "failed", {"last_error": str(error)[:500], "next_attempt_at": None}
    else:
        delay = retry_delay(attempts)
        if error.retry_after:  # the receiver asked for a pause: never sooner than it said
            delay = max(delay, timedelta(seconds=error.retry_after))
        to, values = "pending", {"last_error": str(error)[:500], "next_attempt_at": now + delay}
    kept = write_status(
        NOTIFICATION_DELIVERY,
        where,
        ("pending",),
        to,
        lease_expires_at=None,
        updated_at=now,
        **values,
    )
    db.session.commit()
    if kept != 1:
        log.warning("notification delivery %s: lease lost during the attempt", delivery_id)
        return None
    if to == "pending":
        try:
            jobs.enqueue_at(
                values["next_attempt_at"],
                jobs.WEBHOOKS,
                SEND_NOTIFICATION,
                delivery_id,
                unique=notification_wake(delivery_id, attempts),
            )
        except Exception as error:  # noqa: BLE001 - the sweep wakes it when due
            log.warning("notification delivery %s: retry not scheduled (%s)", delivery_id, error)
    return to == "sent"


def due_notification_ids(now):
    """Deliveries whose attempt is due and that no live process holds, oldest due first."""
    table = NotificationDelivery.__table__.c
    return db.session.execute(
        db.select(table.id, table.attempts)
        .where(
            table.status == "pending",
            table.next_attempt_at <= now,
            db.or_(table.lease_expires_at.is_(None), table.lease_expires_at < now),
        )
        .order_by(table.next_attempt_at)
        .limit(BATCH)
    ).all()


def wake_notifications(due):
    """Enqueue these due deliveries, (id, attempts) each, once their sweep committed; returns how
    many.
    """
    for delivery_id, attempts in due:
        jobs.enqueue(
            jobs.WEBHOOKS,
            SEND_NOTIFICATION,
            delivery_id,
            unique=notification_wake(delivery_id, attempts),
        )
    return len(due)


def send_again(brand_id, delivery_id):
    """A failed delivery back to pending, due now (the panel's "send again"); 1 when it moved."""
    table = NotificationDelivery.__table__.c
    now = utcnow()
    moved = write_status(
        NOTIFICATION_DELIVERY,
        (table.id == delivery_id, table.brand_id == brand_id),
        ("failed",),
        "pending",
        next_attempt_at=now,
        attempts=0,
        updated_at=now,
    )
    if moved:
        jobs.wake_after_commit(
            jobs.WEBHOOKS, SEND_NOTIFICATION, delivery_id, unique=notification_wake(delivery_id, 0)
        )
    return moved
