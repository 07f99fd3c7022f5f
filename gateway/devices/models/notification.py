"""A message for the brand's companion phones (one device, or all when device_id is null), and which
phone has read which."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class Notification(db.Model):
    __tablename__ = "notifications"
    __table_args__ = (db.Index("ix_notifications_brand_created", "brand_id", "created_at"),)

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    device_id = db.Column(db.Integer, db.ForeignKey("devices.id", ondelete="CASCADE"))
    kind = db.Column(db.String(40), nullable=False)
    title = db.Column(db.String(200), nullable=False)
    body = db.Column(db.Text)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)


class NotificationAcknowledgement(db.Model):
    """One phone has read one notification: a brand-wide notification is read phone by phone."""

    __tablename__ = "notification_acknowledgements"

    # The key serves both lookups: "has this phone read it?" and the notification's cascade.
    notification_id = db.Column(
        db.Integer, db.ForeignKey("notifications.id", ondelete="CASCADE"), primary_key=True
    )
    device_id = db.Column(
        db.Integer, db.ForeignKey("devices.id", ondelete="CASCADE"), primary_key=True
    )
    acknowledged_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
