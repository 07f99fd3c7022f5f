"""A wallet's access token, kept where every web process and worker finds it: Redis when REDIS_URL
is set, else the method's wallet_credentials row; sealed in both, never logged.

A token is used until REFRESH_MARGIN before it expires; then one process refreshes it (or grants a
new one) under a lock and stores it for all: Redis's `SET NX PX`, or a guarded UPDATE of the
method's credentials row. The others wait up to LOCK_WAIT for that token, then renew themselves (the
holder died or is stuck; its lock expires after LOCK_TTL).
"""

import json
import secrets
import time
from datetime import datetime, timedelta

from flask import current_app
from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from ..clock import utcnow
from ..extensions import db
from ..sealing import InvalidTag, seal, unseal
from .models import WalletCredential

PURPOSE = "wallet-token"
REFRESH_MARGIN = timedelta(minutes=5)
LOCK_TTL = timedelta(seconds=40)  # longer than one grant or refresh call (30 s read timeout)
LOCK_WAIT = 10  # seconds a process waits for the lock holder's token
LOCK_POLL = 0.05
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end"
CREDENTIALS = WalletCredential.__table__


def bound_to(method_id):
    """The text a method's sealed token is bound to."""
    return f"wallet-token:{method_id}"


def redis_key(method_id):
    """The Redis key of a method's token."""
    return f"gateway:wallet-token:{method_id}"


def redis_client():
    """A Redis connection when REDIS_URL is set, else None."""
    url = current_app.config.get("REDIS_URL")
    return Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2) if url else None


def load_token(method_id):
    """The stored token {"token", "refresh_token", "expires_at" (datetime)} or None."""
    sealed = None
    redis = redis_client()
    if redis is not None:
        try:
            sealed = redis.get(redis_key(method_id))
            sealed = sealed.decode() if sealed else None
        except RedisError:
            sealed = None
    else:
        with db.engine.connect() as connection:
            sealed = connection.execute(
                db.select(CREDENTIALS.c.token_sealed).where(CREDENTIALS.c.method_id == method_id)
            ).scalar()
    if not sealed:
        return None
    try:
        raw, _ = unseal(sealed, PURPOSE, bound_to(method_id))
    except (InvalidTag, ValueError):
        return None
    stored = json.loads(raw)
    stored["expires_at"] = datetime.fromisoformat(stored["expires_at"])
    return stored


def fresh(stored, now=None):
    """Whether a stored token is good for a call now (not within REFRESH_MARGIN of expiry)."""
    return stored is not None and stored["expires_at"] - REFRESH_MARGIN > (now or utcnow())


def store_token(method_id, token, refresh_token, expires_in):
    """Keep a newly granted or refreshed token for every process; returns it as load_token would."""
    expires_at = utcnow() + timedelta(seconds=int(expires_in))
    stored = {"token": token, "refresh_token": refresh_token, "expires_at": expires_at.isoformat()}
    sealed = seal(json.dumps(stored).encode(), PURPOSE, bound_to(method_id))
    redis = redis_client()
    if redis is not None:
        try:
            redis.set(redis_key(method_id), sealed, ex=max(int(expires_in), 1))
        except RedisError:
            pass  # the next call grants again: slower, not wrong
    else:
        store_token_in_database(method_id, sealed, expires_at)
    stored["expires_at"] = expires_at
    return stored


def store_token_in_database(method_id, sealed, expires_at):
    """Write the sealed token on the method's credentials row on a connection of its own, committed
    at once whatever the request does; skipped when the database is busy (SQLite's write lock held
    by the caller's own refund): the token still serves this call."""
    try:
        with db.engine.begin() as connection:
            connection.execute(
                db.update(CREDENTIALS)
                .where(CREDENTIALS.c.method_id == method_id)
                .values(token_sealed=sealed, token_expires_at=expires_at)
            )
    except SQLAlchemyError:
        current_app.logger.warning("wallet token of method %s not stored: database busy", method_id)


def lock_key(method_id):
    """The Redis key of a method's renewal lock."""
    return f"gateway:wallet-token-lock:{method_id}"


def claim_renewal(method_id):
    """Take the method's renewal lock: its release (a callable) when this process holds it now,
    None when another does. Without a lock store answering, this process renews unlocked."""
    redis = redis_client()
    nonce = secrets.token_hex(8)
    if redis is not None:
        try:
            key = lock_key(method_id)
            if not redis.set(key, nonce, nx=True, px=int(LOCK_TTL.total_seconds() * 1000)):
                return None
            return lambda: redis.eval(RELEASE, 1, key, nonce)
        except RedisError:
            return lambda: None
    now = utcnow()
    until = now + LOCK_TTL
    try:
        with db.engine.begin() as connection:
            claimed = connection.execute(
                db.update(CREDENTIALS)
                .where(
                    CREDENTIALS.c.method_id == method_id,
                    db.or_(
                        CREDENTIALS.c.token_lock_until.is_(None),
                        CREDENTIALS.c.token_lock_until < now,
                    ),
                )
                .values(token_lock_until=until)
            ).rowcount
    except SQLAlchemyError:
        return lambda: None  # the database busy (SQLite, the caller's own write): renew unlocked
    if claimed != 1:
        return None
    return lambda: release_in_database(method_id, until)


def release_in_database(method_id, until):
    """Free the database lock this process took (not one taken after it expired)."""
    try:
        with db.engine.begin() as connection:
            connection.execute(
                db.update(CREDENTIALS)
                .where(
                    CREDENTIALS.c.method_id == method_id,
                    CREDENTIALS.c.token_lock_until == until,
                )
                .values(token_lock_until=None)
            )
    except SQLAlchemyError:
        pass  # it expires by itself


def usable(stored, refused):
    """A stored token good for a call that is not the one the wallet just refused."""
    return fresh(stored) and (refused is None or stored["token"] != refused)


def renewed_once(method_id, renew, refused=None):
    """The token after a renewal made by one process for all: `renew(stored)` (a refresh or grant
    that stores its token) runs under the lock, unless a usable token turned up meanwhile; a
    process that finds the lock taken waits for the holder's token, then renews itself."""
    release = claim_renewal(method_id)
    if release is None:
        deadline = time.monotonic() + LOCK_WAIT
        while time.monotonic() < deadline:
            stored = load_token(method_id)
            if usable(stored, refused):
                return stored
            time.sleep(LOCK_POLL)
            release = claim_renewal(method_id)  # the holder finished without a token, or died
            if release is not None:
                break
        else:
            return renew(load_token(method_id))
    try:
        stored = load_token(method_id)
        if usable(stored, refused):
            return stored
        return renew(stored)
    finally:
        release()
