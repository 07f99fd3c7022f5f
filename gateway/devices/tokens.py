"""Device access and refresh tokens (JWT, HS256): short-lived access, rotating single-use
refresh."""

import hashlib
import hmac
import uuid
from datetime import timedelta

import jwt

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import NotAuthenticated
from ..extensions import db
from ..sealing import derived_key, derived_keys
from .models.device import Device

ACCESS_TTL = timedelta(minutes=15)
REFRESH_TTL = timedelta(days=30)
ALGORITHM = "HS256"
REQUIRED_CLAIMS = ["sub", "typ", "jti", "iat", "exp"]


def token_hash(token):
    """SHA-256 of a token: what is stored, never the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def encode(device, typ, lifetime, now):
    """One signed token of a type for a device."""
    claims = {
        "sub": device.uuid,
        "typ": typ,
        "jti": uuid.uuid4().hex,
        "iat": now,
        "exp": now + lifetime,
    }
    return jwt.encode(claims, derived_key("device-tokens"), algorithm=ALGORITHM)


def new_tokens(device):
    """A fresh access and refresh pair, and the hash of the refresh token to store."""
    now = utcnow()
    refresh = encode(device, "refresh", REFRESH_TTL, now)
    tokens = {
        "access_token": encode(device, "access", ACCESS_TTL, now),
        "refresh_token": refresh,
        "token_type": "Bearer",
        "expires_in": int(ACCESS_TTL.total_seconds()),
    }
    return tokens, token_hash(refresh)


def access_token(device):
    """A fresh access token alone, for the gateway's own simulator device."""
    return encode(device, "access", ACCESS_TTL, utcnow())


def issue_tokens(device):
    """Tokens for a newly paired device; its refresh token becomes the only one it may use next."""
    tokens, device.refresh_token_hash = new_tokens(device)
    return tokens


def decode(token, typ):
    """The claims of a valid token of this type; NotAuthenticated otherwise (an access token is no
    refresh token).

    Signed with SECRET_KEY's key or, during a rotation, a fallback's: phones keep working until they
    refresh.
    """
    claims = None
    for key in derived_keys("device-tokens"):
        try:
            claims = jwt.decode(
                token, key, algorithms=[ALGORITHM], options={"require": REQUIRED_CLAIMS}
            )
            break
        except jwt.InvalidSignatureError:
            continue  # the next key may have signed it
        except jwt.ExpiredSignatureError as error:
            raise NotAuthenticated(
                code="TOKEN_EXPIRED", message=f"The {typ} token has expired."
            ) from error
        except jwt.InvalidTokenError as error:
            raise NotAuthenticated(
                code="INVALID_TOKEN", message=f"Not a valid {typ} token."
            ) from error
    if claims is None or claims.get("typ") != typ:
        raise NotAuthenticated(code="INVALID_TOKEN", message=f"Not a valid {typ} token.")
    return claims


def active_device(claims):
    """The device a token names, unless it is gone or revoked."""
    device = db.session.execute(
        db.select(Device).where(Device.uuid == claims["sub"])
    ).scalar_one_or_none()
    if device is None:
        raise NotAuthenticated(code="INVALID_TOKEN", message="The token names no paired device.")
    if device.revoked_at is not None:
        raise NotAuthenticated(
            code="DEVICE_REVOKED", message="This device has been unpaired; pair it again."
        )
    return device


def device_for_access_token(token):
    """The paired, unrevoked device an access token belongs to."""
    return active_device(decode(token, "access"))


def revoke_device(device, reason):
    """Unpair a device: its tokens stop working on the next request (guarded, idempotent)."""
    db.session.execute(
        db.update(Device)
        .where(Device.id == device.id, Device.revoked_at.is_(None))
        .values(revoked_at=utcnow(), revoked_reason=reason, refresh_token_hash=None)
        .execution_options(synchronize_session=False)
    )
    commit_work()
    db.session.refresh(device)


def rotate_tokens(refresh_token, fingerprint=None):
    """Exchange the current refresh token for a new pair; presenting an older one revokes the
    device.
    """
    device = active_device(decode(refresh_token, "refresh"))
    presented = token_hash(refresh_token)
    if presented != device.refresh_token_hash:
        raise refused_reuse(device)
    # The first fingerprint a device presents is pinned; once pinned, a refresh without that very
    # fingerprint (another one, or none at all: a stolen token alone) is refused without revoking.
    if device.fingerprint and not same_fingerprint(fingerprint, device.fingerprint):
        raise NotAuthenticated(
            "The fingerprint differs from the one this device presented before.",
            code="FINGERPRINT_MISMATCH",
        )
    tokens, next_hash = new_tokens(device)
    # Guarded on the old hash: of two concurrent refreshes with one token, only one rotates.
    rotated = db.session.execute(
        db.update(Device)
        .where(
            Device.id == device.id,
            Device.refresh_token_hash == presented,
            Device.revoked_at.is_(None),
        )
        .values(refresh_token_hash=next_hash, fingerprint=device.fingerprint or fingerprint)
        .execution_options(synchronize_session=False)
    ).rowcount
    if rotated != 1:
        db.session.rollback()
        raise refused_reuse(device)
    commit_work()
    db.session.refresh(device)
    return device, tokens


def same_fingerprint(presented, pinned):
    """Whether a refresh presents the pinned fingerprint, compared in constant time."""
    return isinstance(presented, str) and hmac.compare_digest(presented.encode(), pinned.encode())


def refused_reuse(device):
    """Unpair a device whose refresh token came back a second time; returns the error to raise.

    The revocation commits here, even inside a unit of work: the refusal rolls the unit back, and a
    stolen token's device must stay unpaired all the same.
    """
    revoke_device(device, "refresh token reused")
    db.session.commit()
    return NotAuthenticated(
        "This refresh token was already used; the device is unpaired.",
        code="REFRESH_TOKEN_REUSED",
    )
