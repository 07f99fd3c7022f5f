"""An outbound SMS: queued, leased to a companion device or an SMS provider, then sent or failed."""

from ...extensions import db
from ...outbox.columns import OutboxColumns, shown_as
from ...states import OUTBOX_PENDING

# The words the API and the phone read (COMPAT.md): the outbox's, with `pending` told apart by its
# lease.
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

    @property
    def shown_status(self):
        """The documented word: `queued`, `leased` (an attempt holds it), `sent` or `failed`."""
        if self.status != OUTBOX_PENDING:
            return self.status
        return "leased" if self.leased else "queued"

    @classmethod
    def shown_status_sql(cls):
        """SQL: shown_status."""
        return shown_as(cls, "queued", "leased")

    @classmethod
    def showing(cls, word):
        """SQL: the message shows `word` (a list filter's)."""
        return cls.shown_status_sql() == word
