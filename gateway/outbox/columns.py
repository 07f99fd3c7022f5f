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

    @property
    def leased(self):
        """Whether an attempt holds the row (its lease may have run out, not yet returned)."""
        return self.status == OUTBOX_PENDING and self.lease_expires_at is not None


def shown_as(model, waiting, held):
    """SQL: a front door's word for the row: `waiting` for a pending row no attempt holds, `held`
    for one an attempt holds, else the outbox's own (`sent`, `failed`)."""
    return db.case(
        (model.status != OUTBOX_PENDING, model.status),
        (model.lease_expires_at.is_(None), waiting),
        else_=held,
    )
