"""A brand's way to be paid: a provider, the receiving number and how the customer sends to it."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db

PROVIDERS = ("bkash", "nagad", "rocket", "upay")
METHOD_KINDS = ("personal", "agent", "merchant")


class PaymentMethod(db.Model):
    __tablename__ = "payment_methods"
    __table_args__ = (
        db.UniqueConstraint(
            "brand_id", "provider", "number", name="uq_payment_methods_brand_provider_number"
        ),
        db.Index("ix_payment_methods_brand_position", "brand_id", "position"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    provider = db.Column(db.String(20), nullable=False)
    number = db.Column(db.String(11), nullable=False)
    kind = db.Column(db.String(20), nullable=False, default="personal")
    instructions = db.Column(db.Text)
    ask_sender_number = db.Column(db.Boolean, nullable=False, default=False)
    enabled = db.Column(db.Boolean, nullable=False, default=True)
    position = db.Column(db.Integer, nullable=False, default=0)
    # A number no merchant owns (bootstrap's `make run` sample): every page that shows it says so.
    is_demo = db.Column(db.Boolean, nullable=False, default=False, server_default=db.false())
    # The fee passed to the customer (gateway/payments/fees.py fee_for): fixed taka plus a percent
    # of the taka amount, within the optional minimum and maximum.
    fee_fixed = db.Column(Money, nullable=False, default=0, server_default=db.text("0"))
    fee_percent = db.Column(
        db.Numeric(6, 3), nullable=False, default=0, server_default=db.text("0")
    )
    fee_min = db.Column(Money)
    fee_max = db.Column(Money)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    brand = db.relationship("Brand")
