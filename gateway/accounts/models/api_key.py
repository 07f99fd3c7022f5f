"""An API key: a label, scopes and the SHA-256 of a secret shown once."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

SCOPES = ("read", "write", "admin")


class ApiKey(db.Model):
    __tablename__ = "api_keys"
    __table_args__ = (
        # A label names one active key of a brand; revoked keys keep theirs for the record.
        db.Index(
            "uq_api_keys_active_label",
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
    label = db.Column(db.String(100), nullable=False)
    display_prefix = db.Column(db.String(32), nullable=False)
    key_hash = db.Column(db.String(64), nullable=False, unique=True)
    scopes = db.Column(db.String(40), nullable=False)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    last_used_at = db.Column(UTCDateTime)
    revoked_at = db.Column(UTCDateTime)

    # Joined so that authenticating a request is one query for key and brand together.
    brand = db.relationship("Brand", lazy="joined")

    @property
    def scope_set(self):
        """The key's scopes as a set."""
        return {scope for scope in self.scopes.split(",") if scope}

    @property
    def active(self):
        return self.revoked_at is None
