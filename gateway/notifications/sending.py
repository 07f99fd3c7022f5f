"""Sending notifications: one outbox job per delivery through its channel, and the hand retry."""

import logging

from ..clock import utcnow
from ..extensions import db
from ..outbox.attempts import make_attempt, wake_after_commit
from ..states import OUTBOX_FAILED, OUTBOX_PENDING, write_status
from .channels import SENDERS, ChannelError
from .models.notification import NotificationDelivery
from .outbox import NOTIFICATION_DELIVERY, OUTBOX
from .settings import settings_for

log = logging.getLogger(__name__)


def send_notification(delivery_id):
    """Make the next attempt of a due delivery if this process wins its lease; the status it
    leaves.
    """
    return make_attempt(OUTBOX, NotificationDelivery, delivery_id, attempt)


def attempt(delivery):
    """Send through the delivery's channel; None when it went, else the ChannelError (no
    secrets; its retry_after puts the next attempt no sooner)."""
    try:
        SENDERS[delivery.channel](settings_for(delivery.brand_id), delivery.notification)
    except ChannelError as error:
        return error
    except Exception as error:  # noqa: BLE001 - a broken channel is a failed attempt, retried
        log.exception("notification delivery %s: %s failed", delivery.id, delivery.channel)
        return ChannelError(f"Unexpected error ({type(error).__name__}).")
    return None


def send_again(brand_id, delivery_id):
    """A failed delivery back to pending, due now (the panel's "send again"); 1 when it moved."""
    table = NotificationDelivery.__table__.c
    now = utcnow()
    moved = write_status(
        NOTIFICATION_DELIVERY,
        (table.id == delivery_id, table.brand_id == brand_id),
        (OUTBOX_FAILED,),
        OUTBOX_PENDING,
        next_attempt_at=now,
        attempts=0,
        updated_at=now,
    )
    if moved:
        delivery = db.session.get(NotificationDelivery, delivery_id)
        db.session.refresh(delivery)
        wake_after_commit(OUTBOX, delivery)
    return moved
