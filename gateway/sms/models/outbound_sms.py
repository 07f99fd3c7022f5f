"""An outbound SMS: queued, leased to a companion device or an SMS provider, then sent or failed."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

OUTBOUND_SMS_STATUSES = ("queued", "leased", "sent", "failed")


class OutboundSms(db.Model):
    __tablename__ = "outbound_sms"
    __table_args__ = (
        db.Index("ix_outbound_sms_brand_created", "brand_id", "created_at"),
        db.Index("ix_outbound_sms_status_next", "status", "next_attempt_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    payment_id = db.Column(db.Integer, db.ForeignKey("payments.id"))
    to_number = db.Column(db.String(20), nullable=False)
    body = db.Column(db.String(1000), nullable=False)
    status = db.Column(db.String(10), nullable=False, default="queued")
    attempts = db.Column(db.Integer, nullable=False, default=0)
    last_error = db.Column(db.String(500))
    # Who holds the lease: a device reference, or "provider" for the HTTP SMS provider.
    leased_by = db.Column(db.String(64))
    lease_expires_at = db.Column(UTCDateTime)
    next_attempt_at = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)
    sent_at = db.Column(UTCDateTime)
