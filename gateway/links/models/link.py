"""A payment link (/pay/<slug>) and the payments customers made through it."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db
from ...states import LINK_ACTIVE, LINK_DELETED, LINK_DISABLED

LINK_STATUSES = (LINK_ACTIVE, LINK_DISABLED)
# A deleted link is kept for the payments made through it (and its slug stays taken, so that an
# address already shared never takes money for another link), but no read or list shows it again.
DELETED = LINK_DELETED
FIELD_KINDS = ("name", "phone", "address", "text")


class PaymentLink(db.Model):
    __tablename__ = "payment_links"
    __table_args__ = (
        db.Index("ix_payment_links_brand_created", "brand_id", "created_at"),
        db.CheckConstraint("amount IS NULL OR amount > 0", name="amount_positive"),
        db.CheckConstraint("used_count >= 0", name="used_count_not_negative"),
        db.CheckConstraint(
            "usage_limit IS NULL OR used_count <= usage_limit", name="within_usage_limit"
        ),
    )

    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(36), nullable=False, unique=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    # Live (True) or test (False), the mode of the key that made it; rows before test mode are live.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    slug = db.Column(db.String(64), nullable=False, unique=True)
    title = db.Column(db.String(200), nullable=False)
    description = db.Column(db.String(2000))
    currency = db.Column(db.String(3), nullable=False)
    # A fixed amount, or NULL when the customer enters one between min_amount and max_amount.
    amount = db.Column(Money)
    min_amount = db.Column(Money)
    max_amount = db.Column(Money)
    # [{"key", "kind" (name|phone|address|text), "label", "required"}]
    custom_fields = db.Column(db.JSON, nullable=False, default=list)
    usage_limit = db.Column(db.Integer)
    # Slots held: open and paid payments of the link (docs/payment-links.md, "Usage limit").
    used_count = db.Column(db.Integer, nullable=False, default=0)
    expires_at = db.Column(UTCDateTime)
    status = db.Column(db.String(20), nullable=False, default=LINK_ACTIVE)
    callback_url = db.Column(db.String(2048))
    redirect_url = db.Column(db.String(2048))
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)
    disabled_at = db.Column(UTCDateTime)

    brand = db.relationship("Brand")


class LinkPayment(db.Model):
    """Which link a payment came from, what the customer entered, and whether it holds a slot."""

    __tablename__ = "payment_link_payments"
    __table_args__ = (db.Index("ix_payment_link_payments_link", "link_id", "created_at"),)

    id = db.Column(db.Integer, primary_key=True)
    payment_id = db.Column(db.Integer, db.ForeignKey("payments.id"), nullable=False, unique=True)
    link_id = db.Column(db.Integer, db.ForeignKey("payment_links.id"), nullable=False)
    answers = db.Column(db.JSON, nullable=False, default=dict)
    holds_slot = db.Column(db.Boolean, nullable=False, default=True)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    link = db.relationship("PaymentLink")
    payment = db.relationship("Payment")
