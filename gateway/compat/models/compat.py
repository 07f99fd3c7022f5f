"""Compatibility keys (one dialect each) and each dialect's own id for a payment it created."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

DIALECTS = ("uddoktapay", "piprapay2", "piprapay3")


class CompatKey(db.Model):
    """A key a merchant's plugin sends in its dialect's header; the secret is shown once.

    `key_hash` authenticates requests (as api_keys do); `secret_sealed` is the same secret
    encrypted under SECRET_KEY, because two dialects send the key back in their IPN header.
    """

    __tablename__ = "compat_keys"
    __table_args__ = (
        db.Index(
            "uq_compat_keys_active_label",
            "brand_id",
            "label",
            unique=True,
            sqlite_where=db.text("revoked_at IS NULL"),
            postgresql_where=db.text("revoked_at IS NULL"),
        ),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False, index=True)
    # Live (True) or test (False), the mode of the key that made it; rows before test mode are live.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    dialect = db.Column(db.String(20), nullable=False)
    label = db.Column(db.String(100), nullable=False)
    display_prefix = db.Column(db.String(32), nullable=False)
    key_hash = db.Column(db.String(64), nullable=False, unique=True)
    secret_sealed = db.Column(db.String(255), nullable=False)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    last_used_at = db.Column(UTCDateTime)
    revoked_at = db.Column(UTCDateTime)

    brand = db.relationship("Brand")

    @property
    def active(self):
        return self.revoked_at is None


class CompatPayment(db.Model):
    """A payment created through a dialect: its dialect id, return addresses and IPN address."""

    __tablename__ = "compat_payments"
    __table_args__ = (
        db.UniqueConstraint("brand_id", "dialect", "external_id", name="uq_compat_payments_id"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    payment_id = db.Column(db.Integer, db.ForeignKey("payments.id"), nullable=False, unique=True)
    key_id = db.Column(db.Integer, db.ForeignKey("compat_keys.id"), nullable=False, index=True)
    dialect = db.Column(db.String(20), nullable=False)
    external_id = db.Column(db.String(40), nullable=False)
    return_token = db.Column(db.String(64), nullable=False, unique=True)
    redirect_url = db.Column(db.String(2048))
    cancel_url = db.Column(db.String(2048))
    webhook_url = db.Column(db.String(2048))
    return_type = db.Column(db.String(4), nullable=False, default="GET")
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    payment = db.relationship("Payment")
    key = db.relationship("CompatKey")
