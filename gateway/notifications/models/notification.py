"""A brand's notification settings, the notifications raised for it, and their outbox of
deliveries."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db
from ...outbox.columns import OutboxColumns


class NotificationSettings(db.Model):
    """Per-brand: which channels each event goes to, the Telegram bot, and the alerting
    thresholds."""

    __tablename__ = "notification_settings"

    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), primary_key=True)
    # {event: [channel, …]}; an event missing here falls back to DEFAULT_CHANNELS.
    channels = db.Column(db.JSON, nullable=False, default=dict)
    email_to = db.Column(db.String(500))
    # Sealed with a key derived from SECRET_KEY: a bot token is a password to the merchant's chat.
    telegram_token_sealed = db.Column(db.String(512))
    telegram_chat_id = db.Column(db.String(64))
    offline_minutes = db.Column(db.Integer, nullable=False, default=15)
    waiting_minutes = db.Column(db.Integer, nullable=False, default=30)
    unclaimed_minutes = db.Column(db.Integer, nullable=False, default=60)
    notify_back_online = db.Column(db.Boolean, nullable=False, default=True)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow)


class MerchantNotification(db.Model):
    """One thing the merchant is told, once: `dedupe_key` makes a repeated raise (a sweep) a
    no-op."""

    __tablename__ = "merchant_notifications"
    __table_args__ = (
        db.UniqueConstraint("brand_id", "dedupe_key", name="uq_merchant_notifications_dedupe"),
        db.Index("ix_merchant_notifications_brand_created", "brand_id", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    event = db.Column(db.String(40), nullable=False)
    dedupe_key = db.Column(db.String(200))
    subject = db.Column(db.String(200), nullable=False)
    text = db.Column(db.Text, nullable=False)
    link = db.Column(db.Text)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    deliveries = db.relationship(
        "NotificationDelivery", back_populates="notification", order_by="NotificationDelivery.id"
    )


class NotificationDelivery(OutboxColumns, db.Model):
    """The outbox: one notification to one channel, retried with backoff until sent or failed."""

    __tablename__ = "notification_deliveries"
    __table_args__ = (
        db.Index("ix_notification_deliveries_status_next", "status", "next_attempt_at"),
        db.Index("ix_notification_deliveries_brand_created", "brand_id", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    notification_id = db.Column(
        db.Integer, db.ForeignKey("merchant_notifications.id", ondelete="CASCADE"), nullable=False
    )
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    channel = db.Column(db.String(20), nullable=False)

    notification = db.relationship("MerchantNotification", back_populates="deliveries")
