"""A phone that forwards SMS (the paired companion app, or a public forwarder app) and the one-time
codes that pair the companion app.
"""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db

# The platform of the gateway's own simulator device (`flask gateway simulate-sms`): it forwards
# test texts but is no phone of the brand (devices.brand_devices.phones), and the companion app may
# not claim the name.
SIMULATOR_PLATFORM = "simulator"
# The app a phone forwards with: the companion app pairs (/api/mobile/v1); the others are
# forwarders, each posting to its own intake URL (gateway.devices.forwarders).
COMPANION_APP = "ownpay-console"
SMS_GATEWAY_APP = "android-sms-gateway"
SMS_TO_URL_APP = "sms-to-url"
DEVICE_APPS = (COMPANION_APP, SMS_GATEWAY_APP, SMS_TO_URL_APP)


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
    app = db.Column(
        db.String(32), nullable=False, default=COMPANION_APP, server_default=COMPANION_APP
    )
    # The companion app's AES-256 key of the SMS payloads, sealed with a key derived from
    # SECRET_KEY; forwarders have none.
    aes_key_sealed = db.Column(db.String(128))
    # A forwarder's secret: the SMS Gateway signing key sealed like the AES key (it must be read
    # back to check an HMAC), or SHA-256 of the header secret SMS to URL Forwarder sends.
    secret_sealed = db.Column(db.String(255))
    secret_hash = db.Column(db.String(64))
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

    @property
    def forwarder(self):
        """Whether this phone posts to an intake URL rather than speaking the companion protocol."""
        return self.app != COMPANION_APP


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
