"""An SMS forwarded by a paired phone: its text, what the parser read, and the payment it paid."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db
from ...states import (
    SMS_DUPLICATE,
    SMS_IGNORED,
    SMS_MATCHED,
    SMS_RETURNED,
    SMS_REVIEW,
    SMS_UNMATCHED,
    SMS_UNPARSED,
)

SMS_STATUSES = (
    SMS_MATCHED,
    SMS_UNMATCHED,
    SMS_IGNORED,
    SMS_DUPLICATE,
    SMS_REVIEW,
    SMS_UNPARSED,
    SMS_RETURNED,
)


class InboundSms(db.Model):
    __tablename__ = "inbound_sms"
    __table_args__ = (
        # The same text forwarded twice is stored once.
        db.UniqueConstraint("brand_id", "content_hash", name="uq_inbound_sms_brand_content"),
        # A provider TrxID is stored once, so two texts cannot both pay with it.
        db.Index(
            "uq_inbound_sms_brand_provider_trx",
            "brand_id",
            "provider",
            "provider_trx_id",
            unique=True,
            sqlite_where=db.text("provider_trx_id IS NOT NULL"),
            postgresql_where=db.text("provider_trx_id IS NOT NULL"),
        ),
        db.Index("ix_inbound_sms_brand_status_created", "brand_id", "status", "created_at"),
        db.Index("ix_inbound_sms_brand_created", "brand_id", "created_at"),
        db.Index("ix_inbound_sms_device", "device_id"),
    )

    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(36), nullable=False, unique=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    device_id = db.Column(db.Integer, db.ForeignKey("devices.id", ondelete="SET NULL"))
    local_id = db.Column(db.String(64))
    sender = db.Column(db.String(64), nullable=False)
    body = db.Column(db.Text, nullable=False)
    received_at = db.Column(UTCDateTime)
    content_hash = db.Column(db.String(64), nullable=False)
    provider = db.Column(db.String(20))
    incoming = db.Column(db.Boolean, nullable=False, default=False)
    amount = db.Column(Money)
    provider_trx_id = db.Column(db.String(64))
    counterparty = db.Column(db.String(64))
    balance = db.Column(Money)
    printed_time = db.Column(db.String(32))
    status = db.Column(db.String(20), nullable=False, default=SMS_UNMATCHED)
    review_reason = db.Column(db.String(255))
    # Unique: one payment consumes at most one SMS; the guarded UPDATE makes one SMS pay at most
    # one.
    payment_id = db.Column(
        db.Integer, db.ForeignKey("payments.id", ondelete="SET NULL"), unique=True
    )
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    matched_at = db.Column(UTCDateTime)
    # False for a text the gateway simulated for a test payment (gateway/testmode/simulate.py): it
    # pays test payments only (sms/pays.py), and live lists, totals and notifications leave it out.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())

    payment = db.relationship("Payment")
