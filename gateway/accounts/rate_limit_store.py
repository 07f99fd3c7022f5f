"""Rate-limit counters every process shares: in the database without Redis, in Redis with the
database as fallback.

Both are `limits` storages registered by scheme (`gateway+db://`, `gateway+redis://…`), so every
limit of gateway.rate_limits (the pages', the companion app's, the API's) counts through the same
store: a limit holds across gunicorn workers and machines whether Redis is configured, absent or
down.
"""

import hashlib
import time

from limits.storage import RedisStorage, Storage
from sqlalchemy import func, text
from sqlalchemy.exc import SQLAlchemyError

from ..db_types import unstorable
from ..extensions import db
from ..jobs.redis_health import outage_for
from .models.rate_limit import RateLimitCounter

COUNTERS = RateLimitCounter.__table__
KEY_LENGTH = COUNTERS.c.key.type.length


def storage_uri(app):
    """The store for the app's limits: RATELIMIT_STORAGE_URI if set (a plain Redis URL gains the
    database fallback), else Redis with the fallback when REDIS_URL is set, else the database."""
    uri = app.config.get("RATELIMIT_STORAGE_URI") or app.config.get("REDIS_URL") or "gateway+db://"
    return "gateway+" + uri if uri.startswith(("redis://", "rediss://")) else uri


def init_app(app):
    """Point the app's rate limits (gateway.rate_limits) at the shared store."""
    app.config["RATELIMIT_STORAGE_URI"] = storage_uri(app)


def stored_key(key):
    """The key as stored: itself, or its digest when longer than the column or holding text no
    column can take (a NUL from a form's e-mail)."""
    if len(key) <= KEY_LENGTH and not unstorable(key):
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


# One statement, the same on PostgreSQL and SQLite: a first hit opens the window, a hit after it
# ended opens the next, any other adds to it. Every SET expression sees the row as it was, so both
# CASEs test the old window.
COUNT_HIT = text("""
    INSERT INTO rate_limit_counters (key, hits, window_ends) VALUES (:key, :amount, :ends)
    ON CONFLICT (key) DO UPDATE SET
        hits = CASE WHEN rate_limit_counters.window_ends <= :now THEN excluded.hits
                    ELSE rate_limit_counters.hits + excluded.hits END,
        window_ends = CASE WHEN rate_limit_counters.window_ends <= :now THEN excluded.window_ends
                           ELSE rate_limit_counters.window_ends END
    RETURNING hits, window_ends
""")


def count_hit(key, expiry, amount=1):
    """Add `amount` to the key's window in one guarded upsert (a new window if the last ended);
    (hits, ends).

    Atomic: two processes counting at once cannot both open a window or lose a hit, since PostgreSQL
    locks the conflicting row and SQLite the database. It runs in a transaction of its own,
    committed at once, whatever becomes of the request's.
    """
    now = time.time()
    with db.engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # A hit lost to a crash in the next few milliseconds costs nothing; waiting for the WAL
            # flush does.
            connection.execute(text("SET LOCAL synchronous_commit TO OFF"))
        hits, window_ends = connection.execute(
            COUNT_HIT, {"key": stored_key(key), "amount": amount, "ends": now + expiry, "now": now}
        ).one()
    return hits, window_ends


# One hit given back (gateway.rate_limits: an attempt that turned out not to count): one less in the
# window still open, never below zero, never in a window opened after the hit.
GIVE_BACK = text("""
    UPDATE rate_limit_counters SET hits = hits - 1
    WHERE key = :key AND window_ends > :now AND hits > 0
""")
# The same in Redis, where a window's key lives exactly as long as the window.
GIVE_BACK_SCRIPT = """
if tonumber(redis.call('get', KEYS[1]) or '0') > 0 then return redis.call('decr', KEYS[1]) end
return 0
"""


def give_back_hit(key):
    """Take one hit off the key's open window, in a transaction of its own (as count_hit)."""
    with db.engine.begin() as connection:
        connection.execute(GIVE_BACK, {"key": stored_key(key), "now": time.time()})


def current_window(key):
    """(hits, ends) of the key's open window, or None."""
    with db.engine.connect() as connection:
        return connection.execute(
            db.select(COUNTERS.c.hits, COUNTERS.c.window_ends).where(
                COUNTERS.c.key == stored_key(key), COUNTERS.c.window_ends > time.time()
            )
        ).first()


def prune_rate_limit_counters():
    """Delete the counters of windows that have ended (a periodic job); returns how many."""
    with db.engine.begin() as connection:
        return connection.execute(
            db.delete(COUNTERS).where(COUNTERS.c.window_ends <= time.time())
        ).rowcount


class DatabaseStorage(Storage):
    """Fixed-window counters in the `rate_limit_counters` table of the current app's database."""

    STORAGE_SCHEME = ["gateway+db"]

    def __init__(self, uri=None, wrap_exceptions=False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)

    @property
    def base_exceptions(self):
        return SQLAlchemyError

    def incr(self, key, expiry, amount=1):
        return count_hit(key, expiry, amount)[0]

    def give_back(self, key):
        give_back_hit(key)

    def get(self, key):
        window = current_window(key)
        return window.hits if window else 0

    def get_expiry(self, key):
        window = current_window(key)
        return window.window_ends if window else time.time()

    def check(self):
        with db.engine.connect() as connection:
            connection.execute(db.select(func.count()).select_from(COUNTERS).limit(1))
        return True

    def reset(self):
        with db.engine.begin() as connection:
            return connection.execute(db.delete(COUNTERS)).rowcount

    def clear(self, key):
        with db.engine.begin() as connection:
            connection.execute(db.delete(COUNTERS).where(COUNTERS.c.key == stored_key(key)))


class RedisCounters(RedisStorage):
    """`limits`' Redis storage that can also give a hit back (GIVE_BACK_SCRIPT)."""

    def initialize_storage(self, uri):
        super().initialize_storage(uri)
        self.lua_give_back = self.get_connection().register_script(GIVE_BACK_SCRIPT)

    def give_back(self, key):
        self.lua_give_back([self.prefixed_key(key)])


class RedisWithDatabaseFallback(Storage):
    """Counters in Redis while it answers, in the database while it does not (warned once per
    outage).
    """

    STORAGE_SCHEME = ["gateway+redis", "gateway+rediss"]

    def __init__(self, uri, wrap_exceptions=False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        redis_uri = uri.removeprefix("gateway+")
        # Short timeouts: a request must not wait long on a Redis that does not answer.
        options = {"socket_connect_timeout": 1, "socket_timeout": 1, **options}
        self.redis = RedisCounters(redis_uri, **options)
        self.database = DatabaseStorage()
        self.outage = outage_for(redis_uri)

    @property
    def base_exceptions(self):
        return SQLAlchemyError  # Redis' own errors never leave: the database answers instead

    def _counted(self, method, *args):
        """`method` of Redis' storage, or of the database's while Redis is down."""
        if not self.outage.skipping():
            try:
                result = getattr(self.redis, method)(*args)
            except self.redis.base_exceptions as error:
                self.outage.failed(error)
            else:
                self.outage.succeeded()
                return result
        return getattr(self.database, method)(*args)

    def incr(self, key, expiry, amount=1):
        return self._counted("incr", key, expiry, amount)

    def give_back(self, key):
        return self._counted("give_back", key)

    def get(self, key):
        return self._counted("get", key)

    def get_expiry(self, key):
        return self._counted("get_expiry", key)

    def check(self):
        return self._counted("check")

    def reset(self):
        return self._counted("reset")

    def clear(self, key):
        return self._counted("clear", key)
