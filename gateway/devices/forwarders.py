"""Forwarders: phones that post their SMS to an intake URL with a public app (SMS Gateway for
Android, SMS to URL Forwarder) instead of pairing the companion app; creating, listing, revoking.

A forwarder is a Device row whose `app` names the app; each has its own intake URL, which names it
and holds no secret: the SMS Gateway signs each request with a signing key (kept sealed, since the
HMAC needs it back), SMS to URL Forwarder sends a long random header secret (kept as a hash).
"""

import hashlib
import secrets
import uuid
from dataclasses import dataclass

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import NotFound, ValidationFailed, not_found
from ..extensions import db
from ..sealing import seal, unseal
from .brand_devices import get_device
from .models.device import COMPANION_APP, SMS_GATEWAY_APP, SMS_TO_URL_APP, Device
from .pairing import server_url
from .tokens import revoke_device

FORWARDER_APPS = {
    SMS_GATEWAY_APP: "SMS Gateway for Android",
    SMS_TO_URL_APP: "SMS to URL Forwarder",
}
APP_NAMES = {COMPANION_APP: "OwnPay Console", **FORWARDER_APPS}
INTAKE_PATH = "/api/forwarders/{uuid}/sms"
# The header SMS to URL Forwarder is told to send (the merchant types it into the app's headers).
SECRET_HEADER = "X-Forwarder-Secret"
SIGNING_KEY_PURPOSE = "forwarder-signing-key"
MIN_SIGNING_KEY = 12  # the app's own default is 8 random characters: too few to stand alone
MAX_SIGNING_KEY = 128
LABEL_MAX = 120


@dataclass(frozen=True)
class ForwarderCredentials:
    """What the merchant enters into the app, shown once: the URL and the key or header."""

    url: str
    signing_key: str | None = None
    header_name: str | None = None
    header_value: str | None = None


def create_forwarder(brand, app, label, signing_key=None):
    """A new forwarder of `app` for the brand: (device, credentials to show once)."""
    if app not in FORWARDER_APPS:
        raise ValidationFailed.field(
            "app", f"Choose one of: {', '.join(FORWARDER_APPS)}.", "invalid_choice"
        )
    label = " ".join(str(label or "").split())
    if not label or len(label) > LABEL_MAX:
        raise ValidationFailed.field(
            "label", f"Give the phone a name of 1 to {LABEL_MAX} characters."
        )
    device = Device(
        uuid=str(uuid.uuid4()),
        brand_id=brand.id,
        app=app,
        name=label,
        platform="android",
        created_at=utcnow(),
    )
    device.device_id = f"{app}:{device.uuid}"
    url = forwarder_url(device, brand)
    if app == SMS_GATEWAY_APP:
        key = checked_signing_key(signing_key) if signing_key is not None else new_signing_key()
        device.secret_sealed = seal_signing_key(key, device.uuid)
        credentials = ForwarderCredentials(url, signing_key=key)
    else:
        if signing_key is not None:
            raise ValidationFailed.field(
                "signing_key", "SMS to URL Forwarder signs nothing: it sends a header secret."
            )
        value = secrets.token_urlsafe(32)
        device.secret_hash = secret_hash(value)
        credentials = ForwarderCredentials(url, header_name=SECRET_HEADER, header_value=value)
    db.session.add(device)
    commit_work()
    return device, credentials


def new_signing_key():
    """A fresh signing key: 24 URL-safe characters (144 random bits)."""
    return secrets.token_urlsafe(18)


def checked_signing_key(key):
    """The merchant's own signing key, refused when too short, too long or not plainly typeable."""
    if not isinstance(key, str) or not MIN_SIGNING_KEY <= len(key) <= MAX_SIGNING_KEY:
        raise ValidationFailed.field(
            "signing_key",
            f"A signing key has {MIN_SIGNING_KEY} to {MAX_SIGNING_KEY} characters.",
            "too_short" if isinstance(key, str) and len(key) < MIN_SIGNING_KEY else "invalid",
        )
    if any(ch.isspace() or not ch.isprintable() for ch in key):
        raise ValidationFailed.field(
            "signing_key", "A signing key has no spaces or invisible characters."
        )
    return key


def seal_signing_key(key, device_uuid):
    """A signing key sealed at rest under SECRET_KEY, bound to its forwarder."""
    return seal(key.encode("utf-8"), SIGNING_KEY_PURPOSE, device_uuid)


def signing_key(device):
    """The forwarder's signing key as bytes; one sealed under a SECRET_KEY fallback is re-sealed
    under SECRET_KEY now."""
    key, current = unseal(device.secret_sealed, SIGNING_KEY_PURPOSE, device.uuid)
    if not current:
        # Guarded on the old value: of two requests re-sealing at once, one writes; either opens.
        db.session.execute(
            db.update(Device)
            .where(Device.id == device.id, Device.secret_sealed == device.secret_sealed)
            .values(secret_sealed=seal(key, SIGNING_KEY_PURPOSE, device.uuid))
            .execution_options(synchronize_session=False)
        )
        db.session.commit()
        db.session.refresh(device)
    return key


def secret_hash(value):
    """SHA-256 of a header secret, what is stored (256 random bits need no salt)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def forwarder_url(device, brand=None):
    """The forwarder's absolute intake URL, on the brand's own origin when it has one."""
    base = server_url(brand or device.brand).rstrip("/")
    return base + INTAKE_PATH.format(uuid=device.uuid)


def brand_forwarders(brand):
    """The brand's active forwarders, newest first (each with its last_sms_at and
    last_heartbeat_at)."""
    return (
        db.session.execute(
            db.select(Device)
            .where(
                Device.brand_id == brand.id,
                Device.app != COMPANION_APP,
                Device.revoked_at.is_(None),
            )
            .order_by(Device.created_at.desc(), Device.id.desc())
        )
        .scalars()
        .all()
    )


def get_forwarder(brand, device_uuid):
    """A forwarder of this brand by its uuid; NotFound for anything else (a companion phone too)."""
    try:
        device = get_device(brand, device_uuid)
    except NotFound:
        raise not_found("forwarder") from None
    if not device.forwarder:
        raise not_found("forwarder")
    return device


def revoke_forwarder(brand, device_uuid, reason):
    """Revoke a forwarder: its intake URL refuses the next request (the devices' own revocation)."""
    device = get_forwarder(brand, device_uuid)
    revoke_device(device, reason[:100])
    return device
