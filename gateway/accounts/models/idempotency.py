"""A stored response to a POST sent with an Idempotency-Key, replayed for 24 hours."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class IdempotencyRecord(db.Model):
    __tablename__ = "idempotency_records"
    __table_args__ = (
        db.UniqueConstraint("brand_id", "key", name="uq_idempotency_records_brand_key"),
        db.Index("ix_idempotency_records_created", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    key = db.Column(db.String(255), nullable=False)
    request_hash = db.Column(db.String(64), nullable=False)
    response_status = db.Column(db.Integer)
    response_body = db.Column(db.Text)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    # A refund the wallet left undecided (503 REFUND_PENDING): a repeat answers from this attempt as
    # it stands (api/undecided_refunds.py).
    wallet_refund_id = db.Column(db.Integer, db.ForeignKey("wallet_refunds.id", ondelete="CASCADE"))
