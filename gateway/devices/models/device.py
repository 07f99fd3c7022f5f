"""A paired companion-app phone and the one-time codes that pair it."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

# The platform of the gateway's own simulator device (`flask gateway simulate-sms`): it forwards
# test texts but is no phone of the brand (devices.brand_devices.phones), and the companion app may
# not claim the name.
SIMULATOR_PLATFORM = "simulator"


class Device(db.Model):
    __tablename__ = "devices"
    __table_args__ = (db.Index("ix_devices_brand_created", "brand_id", "created_at"),)

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    uuid = db.Column(db.String(36), nullable=False, unique=True)
    device_id = db.Column(db.String(128), nullable=False)
    name = db.Column(db.String(120), nullable=False)
    app_version = db.Column(db.String(32))
    platform = db.Column(db.String(20))
    # The AES-256 key of the SMS payloads, sealed with a key derived from SECRET_KEY.
    aes_key_sealed = db.Column(db.String(128), nullable=False)
    # SHA-256 of the one refresh token that may be used next; any other valid one is a reuse.
    refresh_token_hash = db.Column(db.String(64))
    fingerprint = db.Column(db.String(128))
    status_json = db.Column("status", db.JSON)
    last_heartbeat_at = db.Column(UTCDateTime)
    last_sms_at = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    revoked_at = db.Column(UTCDateTime)
    revoked_reason = db.Column(db.String(100))

    brand = db.relationship("Brand")

    @property
    def active(self):
        return self.revoked_at is None


class PairingCode(db.Model):
    __tablename__ = "pairing_codes"
    __table_args__ = (
        db.Index("ix_pairing_codes_hash", "code_hash"),
        db.Index("ix_pairing_codes_expires", "expires_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    code_hash = db.Column(db.String(64), nullable=False)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    expires_at = db.Column(UTCDateTime, nullable=False)
    used_at = db.Column(UTCDateTime)
    device_id = db.Column(db.Integer, db.ForeignKey("devices.id", ondelete="SET NULL"))
    # Wrong codes sent while this one was live: at GUESS_BUDGET (gateway.devices.pairing) it is
    # dead.
    failed_guesses = db.Column(db.Integer, nullable=False, default=0, server_default="0")
