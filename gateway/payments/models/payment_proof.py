"""A customer's proof of a manual payment (a receipt photo or PDF), kept in the database."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db


class PaymentProof(db.Model):
    """The checked bytes of one upload: every web machine reads the same row, no file is written.

    The customer's filename is never stored: the panel names the download after the payment.
    """

    __tablename__ = "payment_proofs"

    id = db.Column(db.Integer, primary_key=True)
    payment_id = db.Column(
        db.Integer, db.ForeignKey("payments.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    content_type = db.Column(db.String(40), nullable=False)
    content = db.Column(db.LargeBinary, nullable=False)
    size = db.Column(db.Integer, nullable=False)
    sha256 = db.Column(db.String(64), nullable=False)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
