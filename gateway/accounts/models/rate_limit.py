"""A rate-limit counter that every process shares: one fixed window per limit and client."""

from ...extensions import db


class RateLimitCounter(db.Model):
    __tablename__ = "rate_limit_counters"
    __table_args__ = (db.Index("ix_rate_limit_counters_window_ends", "window_ends"),)

    # The `limits` key (limit, scope and client); a longer one is stored as its digest.
    key = db.Column(db.String(255), primary_key=True)
    hits = db.Column(db.Integer, nullable=False)
    # Seconds since the epoch, as `limits` counts: the window resets at this moment.
    window_ends = db.Column(db.Float, nullable=False)
