"""A message for the brand's companion phones (one device, or all when device_id is null)."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class Notification(db.Model):
    __tablename__ = "notifications"
    __table_args__ = (
        db.Index("ix_notifications_brand_ack_created", "brand_id", "acknowledged_at", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    device_id = db.Column(db.Integer, db.ForeignKey("devices.id", ondelete="CASCADE"))
    kind = db.Column(db.String(40), nullable=False)
    title = db.Column(db.String(200), nullable=False)
    body = db.Column(db.Text)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    acknowledged_at = db.Column(UTCDateTime)
