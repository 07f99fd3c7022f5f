"""Idempotency records (api/idempotency.py keeps and replays them): how long one is kept, and the
job that prunes the older ones."""

from datetime import timedelta

from ..clock import utcnow
from ..extensions import db
from .models.idempotency import IdempotencyRecord

RETENTION = timedelta(hours=24)  # the replay window


def prune_idempotency_records():
    """Delete records older than the 24-hour replay window; returns how many went."""
    result = db.session.execute(
        db.delete(IdempotencyRecord).where(IdempotencyRecord.created_at < utcnow() - RETENTION)
    )
    db.session.commit()
    return result.rowcount
