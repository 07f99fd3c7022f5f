"""The columns every outbox table shares: its status, attempts, lease and due time."""

from ..clock import utcnow
from ..db_types import UTCDateTime
from ..extensions import db
from ..states import OUTBOX_PENDING


class OutboxColumns:
    """Mixed into each outbox model. A row is `pending` until sent or failed for good; a worker
    holds it while `lease_expires_at` is set (gateway/outbox/lease.py)."""

    status = db.Column(db.String(10), nullable=False, default=OUTBOX_PENDING)
    attempts = db.Column(db.Integer, nullable=False, default=0)
    next_attempt_at = db.Column(UTCDateTime)
    lease_expires_at = db.Column(UTCDateTime)
    last_error = db.Column(db.String(500))
    sent_at = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)

    # What a front door shows for a pending row: (no attempt holds it, an attempt holds it).
    PENDING_WORDS = (OUTBOX_PENDING, OUTBOX_PENDING)

    @property
    def leased(self):
        """Whether an attempt holds the row (its lease may have run out, not yet returned)."""
        return self.status == OUTBOX_PENDING and self.lease_expires_at is not None

    @property
    def shown_status(self):
        """The front door's word: PENDING_WORDS for a pending row, else `sent` or `failed`."""
        return self.PENDING_WORDS[self.leased] if self.status == OUTBOX_PENDING else self.status

    @classmethod
    def shown_status_sql(cls):
        """SQL: shown_status."""
        waiting, held = cls.PENDING_WORDS
        return db.case(
            (cls.status != OUTBOX_PENDING, cls.status),
            (cls.lease_expires_at.is_(None), waiting),
            else_=held,
        )
