"""Events: every event the gateway sent or would have sent, kept for the events API (30 days)."""

import json

from ...db_types import UTCDateTime
from ...extensions import db


class Event(db.Model):
    __tablename__ = "events"
    __table_args__ = (
        db.Index("ix_events_brand_livemode_created", "brand_id", "livemode", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(40), nullable=False, unique=True)  # evt_…, the body's `id`
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    type = db.Column(db.String(40), nullable=False)
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    # The webhook body, exactly as webhooks/events.py built it (its `created` is created_at).
    payload = db.Column(db.Text, nullable=False)
    created_at = db.Column(UTCDateTime, nullable=False, index=True)

    @property
    def data(self):
        """The event's payload: the body's `data`."""
        return json.loads(self.payload)["data"]
