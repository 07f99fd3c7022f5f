"""Notifications for the companion phones: written by the service, read and acknowledged by the
app."""

from ..answer_commit import commit_work
from ..clock import utcnow
from ..extensions import db
from .models.notification import Notification

PAGE = 50


def notify_devices(brand_id, kind, title, body=None, device=None):
    """Queue a notification for one device, or every device of the brand; the caller commits."""
    notification = Notification(
        brand_id=brand_id,
        device_id=device.id if device else None,
        kind=kind,
        title=title[:200],
        body=body,
        created_at=utcnow(),
    )
    db.session.add(notification)
    return notification


def for_device(device):
    """The WHERE clause of what a device may see: its own and the brand-wide notifications."""
    return (
        Notification.brand_id == device.brand_id,
        db.or_(Notification.device_id == device.id, Notification.device_id.is_(None)),
    )


def pending_notifications(device):
    """The oldest unacknowledged notifications this device may see."""
    return (
        db.session.execute(
            db.select(Notification)
            .where(*for_device(device), Notification.acknowledged_at.is_(None))
            .order_by(Notification.created_at, Notification.id)
            .limit(PAGE)
        )
        .scalars()
        .all()
    )


def count_pending(device):
    """How many unacknowledged notifications wait for this device."""
    return db.session.execute(
        db.select(db.func.count())
        .select_from(Notification)
        .where(*for_device(device), Notification.acknowledged_at.is_(None))
    ).scalar_one()


def acknowledge_notifications(device, ids):
    """Mark notifications read; ids of other devices or brands are ignored. Returns how many
    changed.
    """
    changed = db.session.execute(
        db.update(Notification)
        .where(
            *for_device(device), Notification.id.in_(ids), Notification.acknowledged_at.is_(None)
        )
        .values(acknowledged_at=utcnow())
        .execution_options(synchronize_session=False)
    ).rowcount
    commit_work()
    return changed
