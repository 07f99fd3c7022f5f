"""Webhook deliveries (the transactional outbox) and the log of every attempt to send one."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db
from ...outbox.columns import OutboxColumns
from ...states import OUTBOX_FAILED, OUTBOX_SENT

# The delivery log's words (docs/spec/CONTRACT.md): the outbox's, with `pending` told apart by
# whether an attempt already ended.
LOG_STATUSES = ("pending", "retrying", "success", "failed")


class WebhookDelivery(OutboxColumns, db.Model):
    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        db.Index("ix_webhook_deliveries_brand_created", "brand_id", "created_at"),
        db.Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    payment_id = db.Column(db.Integer, db.ForeignKey("payments.id"))
    transaction_id = db.Column(db.Integer, db.ForeignKey("transactions.id"))
    event = db.Column(db.String(40), nullable=False)
    # The event delivered (events.public_id; a plugin dialect's IPN has an id of its own). One event
    # goes to several places: the payment's URL and each endpoint that chose it.
    event_id = db.Column(db.String(40), nullable=False, index=True)
    # The webhook endpoint it goes to, signed with that endpoint's secret; NULL for the payment's
    # callback_url, the brand's webhook URL or a test URL, signed with the brand's secret.
    endpoint_id = db.Column(db.Integer, db.ForeignKey("webhook_endpoints.id"))
    # Its event's mode (an IPN's: its payment's): a key's delivery log shows its own mode only.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    url = db.Column(db.String(2048), nullable=False)
    # The exact JSON body sent at every attempt: what is signed is what is stored.
    payload = db.Column(db.Text, nullable=False)
    # Attempts asked for by hand (panel/API redelivery): they do not count against the automatic
    # budget.
    manual_attempts = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # A hand redelivery waits for its claim; `resume_at` keeps the automatic attempt it stepped in
    # front of.
    redelivery_requested = db.Column(
        db.Boolean, nullable=False, default=False, server_default=db.false()
    )
    resume_at = db.Column(UTCDateTime)
    response_status = db.Column(db.Integer)
    response_body = db.Column(db.Text)

    brand = db.relationship("Brand")
    endpoint = db.relationship("WebhookEndpoint")
    attempt_log = db.relationship(
        "WebhookAttempt", order_by="WebhookAttempt.id", lazy="select", back_populates="delivery"
    )

    @property
    def log_status(self):
        """The delivery log's word: `success`, `failed`, `pending` (no attempt ended yet: none made,
        or only the one under way) or `retrying`."""
        if self.status == OUTBOX_SENT:
            return "success"
        if self.status == OUTBOX_FAILED:
            return "failed"
        return "retrying" if self.attempts > (1 if self.leased else 0) else "pending"


class WebhookAttempt(db.Model):
    __tablename__ = "webhook_attempts"

    id = db.Column(db.Integer, primary_key=True)
    delivery_id = db.Column(
        db.Integer,
        db.ForeignKey("webhook_deliveries.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )
    attempted_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    response_status = db.Column(db.Integer)
    response_body = db.Column(db.String(2048))
    duration_ms = db.Column(db.Integer)
    error = db.Column(db.String(500))

    delivery = db.relationship("WebhookDelivery", back_populates="attempt_log")
