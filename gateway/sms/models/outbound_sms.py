"""An outbound SMS: queued, leased to a companion device or an SMS provider, then sent or failed."""

from ...extensions import db
from ...outbox.columns import OutboxColumns

# The words the API and the phone read (docs/spec/COMPAT.md): the outbox's, with `pending` told
# apart by its lease.
OUTBOUND_SMS_STATUSES = ("queued", "leased", "sent", "failed")


class OutboundSms(OutboxColumns, db.Model):
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
    # Who holds the lease: a device reference, or "provider" for the HTTP SMS provider.
    leased_by = db.Column(db.String(64))
    # False for a text a test key, a test invoice or the panel viewing test data asked for: listed
    # and retried in test mode only (docs/test-mode.md), though sent like any other.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())

    PENDING_WORDS = ("queued", "leased")
