"""Trusting a forwarder's request: it names an active forwarder and carries that forwarder's
signature (SMS Gateway for Android) or header secret (SMS to URL Forwarder)."""

import hashlib
import hmac

from ..clock import utcnow
from ..domain_errors import NotAuthenticated, NotFound
from ..extensions import db
from .forwarders import SECRET_HEADER, secret_hash, signing_key
from .models.device import COMPANION_APP, SMS_GATEWAY_APP, Device

MAX_CLOCK_SKEW_SECONDS = 300  # X-Timestamp further than this from our clock is a replay


def intake_forwarder(device_uuid):
    """The forwarder an intake URL names; NotFound for none (or a companion phone), refused when
    revoked."""
    device = db.session.execute(
        db.select(Device).where(Device.uuid == str(device_uuid)[:36], Device.app != COMPANION_APP)
    ).scalar_one_or_none()
    if device is None:
        raise NotFound("forwarder", "No forwarder at this address.")
    if device.revoked_at is not None:
        raise NotAuthenticated(
            "This forwarder was revoked; add a new one in the panel.", code="FORWARDER_REVOKED"
        )
    return device


def verify_forwarder_request(device, body, headers):
    """Refuse a request the forwarder did not send: a wrong or missing signature or header secret,
    or a stale timestamp."""
    if device.app == SMS_GATEWAY_APP:
        verify_signature(device, body, headers.get("X-Timestamp"), headers.get("X-Signature"))
    else:
        verify_header_secret(device, headers.get(SECRET_HEADER))


def verify_signature(device, body, timestamp, signature):
    """X-Signature must be hex HMAC-SHA256 of the raw body followed by X-Timestamp, keyed with the
    signing key, and X-Timestamp within five minutes of our clock."""
    if not timestamp or not signature:
        raise NotAuthenticated(
            "Send X-Timestamp and X-Signature: set the signing key in the app's webhook settings.",
            code="MISSING_SIGNATURE",
        )
    expected = hmac.new(
        signing_key(device), body + timestamp.encode("utf-8"), hashlib.sha256
    ).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.strip().lower().encode()):
        raise NotAuthenticated(
            "The signature does not match this forwarder's signing key.", code="INVALID_SIGNATURE"
        )
    try:
        sent_at = int(timestamp)
    except ValueError:
        sent_at = None
    now = int(utcnow().timestamp())
    if sent_at is None or abs(now - sent_at) > MAX_CLOCK_SKEW_SECONDS:
        raise NotAuthenticated(
            "X-Timestamp is more than five minutes from the server's clock: check the phone's "
            "date and time.",
            code="STALE_TIMESTAMP",
        )


def verify_header_secret(device, presented):
    """The header secret must hash to the stored one (compared in constant time)."""
    if not presented:
        raise NotAuthenticated(
            f"Send the forwarder's secret in the {SECRET_HEADER} header.", code="MISSING_SECRET"
        )
    if not hmac.compare_digest(secret_hash(presented.strip()), device.secret_hash or ""):
        raise NotAuthenticated(
            f"The {SECRET_HEADER} header does not match this forwarder.", code="INVALID_SECRET"
        )
