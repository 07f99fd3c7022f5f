"""Compatibility keys: one dialect each, secret shown once, stored hashed (and sealed for the
IPN)."""

import hmac
import secrets

from sqlalchemy.exc import IntegrityError

from ..accounts.api_keys import DISPLAY_CHARS, hash_secret, prefix_of_test_keys
from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import AlreadyExists, NotFound, field_error
from ..extensions import db
from ..sealing import InvalidTag, seal, unseal
from .models.compat import DIALECTS, CompatKey

SECRET_PREFIX = {"uddoktapay": "up_", "piprapay2": "pp2_", "piprapay3": "pp3_"}
SEAL_PURPOSE = "compat-key-at-rest"


def seal_secret(secret, digest):
    """The secret encrypted under a key derived from SECRET_KEY, bound to its hash."""
    return seal(secret.encode(), SEAL_PURPOSE, digest)


def open_secret(key):
    """The key's secret for its IPN header, or None when no key in use opens it (a rotated
    SECRET_KEY).
    """
    try:
        return unseal(key.secret_sealed, SEAL_PURPOSE, key.key_hash)[0].decode()
    except (InvalidTag, ValueError):
        return None


def check_dialect(dialect):
    """The dialect name, or ValidationFailed on `dialect`."""
    if dialect not in DIALECTS:
        raise field_error("dialect", f"Dialect must be one of {', '.join(DIALECTS)}.")
    return dialect


def generate_compat_key(brand, label, dialect, livemode=True):
    """Create and commit a key of one dialect; returns (key, secret), the secret only here.

    A test key (`livemode=False`) has its dialect's prefix made a test one (`up_test_`, by
    accounts/api_keys.py prefix_of_test_keys) and sees and makes test payments only.
    """
    dialect = check_dialect(dialect)
    label = (label or "").strip()
    if not label or len(label) > 100:
        raise field_error("label", "A label of 1 to 100 characters is required.")
    prefix = SECRET_PREFIX[dialect] if livemode else prefix_of_test_keys(SECRET_PREFIX[dialect])
    secret = prefix + secrets.token_urlsafe(32)
    digest = hash_secret(secret)
    key = CompatKey(
        brand_id=brand.id,
        livemode=bool(livemode),
        dialect=dialect,
        label=label,
        key_hash=digest,
        secret_sealed=seal_secret(secret, digest),
        display_prefix=secret[: len(prefix) + DISPLAY_CHARS],
    )
    db.session.add(key)
    try:
        commit_work()
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            f"An active key is already labelled {label!r}.",
            [
                {
                    "field": "label",
                    "code": "taken",
                    "message": "Labels are unique among active keys.",
                }
            ],
            code="LABEL_TAKEN",
        )
    return key, secret


def find_compat_key(secret):
    """The active compatibility key whose secret this is (constant-time compare), or None."""
    if not secret:
        return None
    digest = hash_secret(secret)
    key = db.session.execute(
        db.select(CompatKey).where(CompatKey.key_hash == digest)
    ).scalar_one_or_none()
    if key is None or not hmac.compare_digest(key.key_hash, digest) or not key.active:
        return None
    now = utcnow()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() >= 60:
        db.session.execute(
            db.update(CompatKey).where(CompatKey.id == key.id).values(last_used_at=now)
        )
        db.session.commit()
    return key


def list_compat_keys(brand):
    """The brand's compatibility keys, newest first, revoked ones included."""
    return (
        db.session.execute(
            db.select(CompatKey)
            .where(CompatKey.brand_id == brand.id)
            .order_by(CompatKey.created_at.desc(), CompatKey.id.desc())
        )
        .scalars()
        .all()
    )


def revoke_compat_key(brand, key_id):
    """Deactivate one of the brand's keys by id (guarded UPDATE); NotFound when none is active."""
    key_id = row_id(key_id)
    revoked = 0
    if key_id is not None:
        revoked = db.session.execute(
            db.update(CompatKey)
            .where(
                CompatKey.id == key_id,
                CompatKey.brand_id == brand.id,
                CompatKey.revoked_at.is_(None),
            )
            .values(revoked_at=utcnow())
        ).rowcount
    if not revoked:
        db.session.rollback()
        raise NotFound("compat_key", "No active compatibility key by that id.")
    commit_work()
    return db.session.get(CompatKey, key_id)


def ipn_key_secret(key):
    """The secret an IPN carries: the creating key while active, else the newest active key of
    that brand and dialect (the plugin was re-keyed), else the creating key's."""
    chosen = key
    if not key.active:
        newer = db.session.execute(
            db.select(CompatKey)
            .where(
                CompatKey.brand_id == key.brand_id,
                CompatKey.dialect == key.dialect,
                CompatKey.revoked_at.is_(None),
            )
            .order_by(CompatKey.id.desc())
            .limit(1)
        ).scalar_one_or_none()
        chosen = newer or key
    return open_secret(chosen)
