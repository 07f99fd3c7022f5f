"""Notifications for the companion phones: written by the service, read and acknowledged by the
app, each phone for itself."""

from datetime import timedelta

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from ..answer_commit import commit_work, unit_of_work
from ..clock import utcnow
from ..db_types import UTCDateTime
from ..extensions import db
from .models.notification import Notification, NotificationAcknowledgement

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
    """The WHERE clause of what a device may see: its own notifications and the brand-wide ones
    since it was paired (a phone paired, or paired again, today is not handed the brand's whole
    history to read)."""
    return (
        Notification.brand_id == device.brand_id,
        db.or_(
            Notification.device_id == device.id,
            db.and_(Notification.device_id.is_(None), Notification.created_at >= device.created_at),
        ),
    )


def unread_by(device):
    """The WHERE clause of what a device may see and has not acknowledged (another phone's
    acknowledgement of a brand-wide notification is not this one's)."""
    acknowledged = db.exists().where(
        NotificationAcknowledgement.notification_id == Notification.id,
        NotificationAcknowledgement.device_id == device.id,
    )
    return (*for_device(device), ~acknowledged)


def pending_notifications(device):
    """The oldest notifications this device has not acknowledged."""
    return (
        db.session.execute(
            db.select(Notification)
            .where(*unread_by(device))
            .order_by(Notification.created_at, Notification.id)
            .limit(PAGE)
        )
        .scalars()
        .all()
    )


def count_pending(device):
    """How many notifications wait for this device to acknowledge them."""
    return db.session.execute(
        db.select(db.func.count()).select_from(Notification).where(*unread_by(device))
    ).scalar_one()


def acknowledge_notifications(device, ids):
    """Mark notifications read by this device; ids of other devices or brands are ignored. Returns
    how many were unread by it.

    One INSERT … SELECT of the pairs, a pair already there skipped (ON CONFLICT DO NOTHING): an
    acknowledgement sent again, or racing its twin from another request, changes nothing and
    fails nothing.
    """
    table = NotificationAcknowledgement.__table__
    insert = pg_insert if db.session.get_bind().dialect.name == "postgresql" else sqlite_insert
    visible = db.select(
        Notification.id, db.literal(device.id), db.literal(utcnow(), UTCDateTime())
    ).where(*for_device(device), Notification.id.in_(ids))
    changed = db.session.execute(
        insert(table)
        .from_select(["notification_id", "device_id", "acknowledged_at"], visible)
        .on_conflict_do_nothing(index_elements=["notification_id", "device_id"])
        # SQLAlchemy keeps an INSERT's rowcount only when asked.
        .execution_options(preserve_rowcount=True)
    ).rowcount
    commit_work()
    return changed


# Phone notifications are kept this long, read or not: a phone is not handed months-old alerts, and
# the unread list and count walk what is kept.
KEPT = timedelta(days=90)
BATCH = 1000


def prune_phone_notifications(now=None):
    """The periodic job: forget up to BATCH phone notifications older than KEPT; how many."""
    before = (now or utcnow()) - KEPT
    with unit_of_work():
        ids = (
            db.session.execute(
                db.select(Notification.id).where(Notification.created_at < before).limit(BATCH)
            )
            .scalars()
            .all()
        )
        if ids:  # who read them goes with them (ON DELETE CASCADE)
            db.session.execute(db.delete(Notification).where(Notification.id.in_(ids)))
    return len(ids)
