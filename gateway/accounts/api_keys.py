"""API keys: generated with a secret shown once, stored as a hash, revoked by label."""

import functools
import hashlib
import hmac
import secrets

from flask import current_app
from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import AlreadyExists, NotFound, field_error
from ..extensions import db
from .models.api_key import SCOPES, ApiKey
from .models.brand import Brand

DISPLAY_CHARS = 6
_KEYS = ApiKey.__table__
# Built once, in Core: every API request runs it, and only reads the key; loading an ORM key (and
# its brand) cost as much as the rest of a payment read. A prepared statement also skips re-keying.
KEY_BY_HASH = db.select(
    _KEYS.c.id,
    _KEYS.c.brand_id,
    _KEYS.c.scopes,
    _KEYS.c.livemode,
    _KEYS.c.key_hash,
    _KEYS.c.last_used_at,
    _KEYS.c.revoked_at,
).where(_KEYS.c.key_hash == db.bindparam("digest"))
# KEY_BY_HASH with the key's brand loaded as a Brand (`row.Brand`), for a call that works on its
# brand (creating a payment): one round trip where the key and then its brand were two.
KEY_WITH_BRAND = KEY_BY_HASH.join(Brand, Brand.id == _KEYS.c.brand_id).add_columns(Brand)


def hash_secret(secret):
    """The SHA-256 hex digest stored in place of a key's secret (the secret has 256 random bits)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@functools.cache
def key_with(companion):
    """KEY_BY_HASH with the columns of `companion` (a subquery with a `brand_id` column) joined
    on the key's brand: the key and what the request reads of its brand, in one round trip.

    A companion with a `livemode` column is joined on the key's mode too: a test key never reads a
    live row, nor a live key a test one (the row's `livemode` is then the key's).
    """
    on = companion.c.brand_id == _KEYS.c.brand_id
    if "livemode" in companion.c:
        on = db.and_(on, companion.c.livemode == _KEYS.c.livemode)
    columns = [column for column in companion.c if column.key not in ("brand_id", "livemode")]
    return KEY_BY_HASH.outerjoin(companion, on).add_columns(*columns)


def find_active_key(secret, companion=None, params=None, with_brand=False):
    """The active key whose secret this is, compared in constant time; None otherwise.

    A read-only row (id, brand_id, scopes, livemode, last_used_at, …), not an ApiKey: every
    request runs this.
    With `companion` (see key_with) and its bind `params`, the row also carries the companion's
    columns, None where the key's brand has no such row. Revocation is read in the same statement,
    so a revoked key reads nothing. `with_brand` adds the key's Brand, in the session, as
    `row.Brand` (KEY_WITH_BRAND).
    """
    digest = hash_secret(secret)
    if with_brand:
        key = db.session.execute(KEY_WITH_BRAND, {"digest": digest}).first()
    else:
        query = KEY_BY_HASH if companion is None else key_with(companion)
        key = db.session.connection().execute(query, {**(params or {}), "digest": digest}).first()
    if key is None or not hmac.compare_digest(key.key_hash, digest) or key.revoked_at is not None:
        return None
    return key


def normalise_scopes(scopes):
    """A sorted, de-duplicated list of known scopes, or ValidationFailed naming the bad one."""
    if isinstance(scopes, str):
        scopes = [part.strip() for part in scopes.split(",")]
    chosen = {scope for scope in scopes if scope}
    unknown = chosen - set(SCOPES)
    if not chosen or unknown:
        raise field_error("scopes", f"Scopes must be drawn from {', '.join(SCOPES)}.")
    return [scope for scope in SCOPES if scope in chosen]


def prefix_of_test_keys(prefix):
    """The prefix of a test key made beside live keys of `prefix` (API_KEY_PREFIX, `gw_live_`).

    The last "live" in it becomes "test" (`gw_live_` gives `gw_test_`); a prefix without "live" is
    followed by "test_" (`shop_` gives `shop_test_`). The compatibility keys follow the same rule
    (`up_` gives `up_test_`).
    """
    head, live, tail = prefix.rpartition("live")
    return head + "test" + tail if live else prefix + "test_"


def key_prefix(livemode):
    """The prefix of a new key: API_KEY_PREFIX for a live key, prefix_of_test_keys of it for a test
    key."""
    prefix = current_app.config["API_KEY_PREFIX"]
    return prefix if livemode else prefix_of_test_keys(prefix)


def generate_key(brand, label, scopes, livemode=True):
    """Create and commit a key (a test key with `livemode=False`); returns (key, secret) — the
    secret exists only in this return value."""
    key, secret = add_key(brand, label, scopes, livemode=livemode)
    try:
        commit_work()
    except IntegrityError:
        db.session.rollback()
        raise AlreadyExists(
            f"An active key is already labelled {key.label!r}.",
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


def add_key(brand, label, scopes, livemode=True):
    """A new key added to the current transaction, which the caller commits; returns (key,
    secret). A test key (`livemode=False`) has the test prefix (prefix_of_test_keys)."""
    label = (label or "").strip()
    if not label or len(label) > 100:
        raise field_error(
            "label",
            "A label of 1 to 100 characters is required.",
            "required" if not label else "invalid",
        )
    scopes = normalise_scopes(scopes)
    prefix = key_prefix(livemode)
    secret = prefix + secrets.token_urlsafe(32)
    key = ApiKey(
        brand_id=brand.id,
        livemode=bool(livemode),
        label=label,
        scopes=",".join(scopes),
        key_hash=hash_secret(secret),
        display_prefix=secret[: len(prefix) + DISPLAY_CHARS],
    )
    db.session.add(key)
    return key, secret


def of_keys_seen_by(query, livemode):
    """`query` narrowed to the keys a caller of that mode manages: a live caller (the panel, the
    command line, a live key) every key of the brand, a test key only test keys."""
    return query if livemode else query.where(ApiKey.livemode.is_(False))


def list_keys(brand, livemode=True):
    """The brand's keys, newest first, revoked ones included for the record (of_keys_seen_by)."""
    return (
        db.session.execute(
            of_keys_seen_by(
                db.select(ApiKey).where(ApiKey.brand_id == brand.id), livemode
            ).order_by(ApiKey.created_at.desc(), ApiKey.id.desc())
        )
        .scalars()
        .all()
    )


def revoke_key(brand, *, key_id=None, label=None, livemode=True):
    """Deactivate a key by id or label; every later request with it fails with INVALID_TOKEN. A
    test key revokes only test keys (of_keys_seen_by)."""
    if key_id is not None and row_id(key_id) is None:
        # an id from a URL that no row can have ("abc", 2**64), before it reaches the database
        raise key_not_found()
    query = of_keys_seen_by(
        db.select(ApiKey).where(ApiKey.brand_id == brand.id, ApiKey.revoked_at.is_(None)), livemode
    )
    query = (
        query.where(ApiKey.id == row_id(key_id))
        if key_id is not None
        else query.where(ApiKey.label == label)
    )
    key = db.session.execute(query).scalar_one_or_none()
    if key is None:
        raise key_not_found()
    revoked = db.session.execute(
        db.update(ApiKey)
        .where(ApiKey.id == key.id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    ).rowcount
    commit_work()
    if not revoked:
        raise key_not_found()
    db.session.refresh(key)
    return key


def key_not_found():
    """NotFound for a key id or label that names no active key of the brand."""
    return NotFound("api_key", "No active key by that id or label.")
