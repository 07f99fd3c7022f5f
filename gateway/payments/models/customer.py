"""A customer profile, upserted from payments and editable through the API."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class Customer(db.Model):
    __tablename__ = "customers"
    __table_args__ = (
        # One profile per e-mail in each mode: a test payment never fills in a live profile.
        db.Index(
            "uq_customers_brand_mode_email",
            "brand_id",
            "livemode",
            "email",
            unique=True,
            sqlite_where=db.text("email IS NOT NULL"),
            postgresql_where=db.text("email IS NOT NULL"),
        ),
        db.Index("ix_customers_brand_phone", "brand_id", "phone"),
        db.Index("ix_customers_brand_created", "brand_id", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    # Live (True) or test (False), the mode of the key that made it; rows before test mode are live.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    name = db.Column(db.String(200))
    email = db.Column(db.String(254))
    phone = db.Column(db.String(20))
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)
