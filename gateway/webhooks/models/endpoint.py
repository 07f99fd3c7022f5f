"""Webhook endpoints: the URLs a brand chose, each with its own sealed secret and chosen events."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

ALL_EVENTS = "*"  # enabled_events ["*"]: every event, those added later included


class WebhookEndpoint(db.Model):
    __tablename__ = "webhook_endpoints"
    __table_args__ = (db.Index("ix_webhook_endpoints_brand_livemode", "brand_id", "livemode"),)

    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(40), nullable=False, unique=True)  # we_…
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    url = db.Column(db.String(2048), nullable=False)
    description = db.Column(db.String(200))
    # Event types (webhooks/events.py EVENTS), or ["*"].
    enabled_events = db.Column(db.JSON, nullable=False, default=lambda: [ALL_EVENTS])
    enabled = db.Column(db.Boolean, nullable=False, default=True)
    # Decided by the key that created it: live endpoints get live events only, test ones test ones.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    # Sealed by webhooks/endpoints.py (sealing.py), bound to public_id; shown once in clear.
    secret_sealed = db.Column(db.String(255), nullable=False)
    # The rotation's overlap rule, as the brand's secret has it (deliveries.py:overlap_rotation).
    secret_previous_sealed = db.Column(db.String(255))
    secret_previous_until = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)
    # Deleted endpoints stay for their delivery records, which name them; nothing reads them again.
    deleted_at = db.Column(UTCDateTime)

    def wants(self, event):
        """Whether this endpoint chose `event`."""
        return ALL_EVENTS in self.enabled_events or event in self.enabled_events
