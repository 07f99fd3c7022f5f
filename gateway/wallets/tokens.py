"""A wallet's access token, kept where every web process and worker finds it: Redis when REDIS_URL
is set, else the method's wallet_credentials row; sealed in both, never logged.

A token is used until REFRESH_MARGIN before it expires; then one process refreshes it and stores
the new one for all (two racing ones both get a valid token: the wallet keeps the older valid).
"""

import json
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


def forget_token(method_id):
    """Drop a token the wallet refused, so the next call grants a new one."""
    redis = redis_client()
    if redis is not None:
        try:
            redis.delete(redis_key(method_id))
        except RedisError:
            pass
    else:
        store_token_in_database(method_id, None, None)
