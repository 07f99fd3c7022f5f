"""Whether Redis answers: one warning when an outage starts, one line when it ends, and a pause
between tries.
"""

import logging
import threading
import time
from urllib.parse import urlsplit

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

RETRY_AFTER = 2  # seconds an unreachable Redis is left alone before the next call tries it again
_outages = {}
_outages_lock = threading.Lock()


class RedisUnavailable(RedisConnectionError):
    """Redis is known to be down: the call was not tried (a ConnectionError, so existing handlers
    catch it).
    """


class RedisOutage:
    """The reachability of one Redis URL in this process, shared by the rate limits, the wake-ups
    and the worker.
    """

    def __init__(self, url):
        self.where = redacted(url)
        # Short timeouts: the check runs inside requests, which must not hang on an unreachable
        # Redis.
        self.client = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        self.lock = threading.Lock()
        self.since = None  # time.monotonic() when the outage began; None while Redis answers
        self.retry_at = 0.0

    @property
    def down(self):
        """Whether the last call to this Redis failed and no call has succeeded since."""
        return self.since is not None

    def skipping(self):
        """Whether callers should not even try Redis now: it is down and its next try is not yet
        due.
        """
        return self.since is not None and time.monotonic() < self.retry_at

    def failed(self, error):
        """Note a failed call; True when Redis is down (it does not answer a PING either), warning
        once per outage.
        """
        if self.since is None:
            try:  # one failed command is not an outage: a PING tells them apart
                self.client.ping()
                return False
            except RedisError:
                pass
        with self.lock:
            self.retry_at = time.monotonic() + RETRY_AFTER
            if self.since is not None:
                return True
            self.since = time.monotonic()
        log.warning(
            "Redis at %s is unreachable (%s): wake-ups are skipped and the sweep will pick "
            "them up, rate limits count in the database, until it answers again",
            self.where,
            error,
        )
        return True

    def succeeded(self):
        """Note a successful call, ending an outage (logged once)."""
        if self.since is None:
            return
        with self.lock:
            if self.since is None:
                return
            lasted, self.since = time.monotonic() - self.since, None
        log.warning(
            "Redis at %s answers again after %.0f s; wake-ups and rate limits use it again",
            self.where,
            lasted,
        )

    def probe(self):
        """Whether Redis answers a PING now (without trying while an outage's pause lasts)."""
        if self.skipping():
            return False
        try:
            self.client.ping()
        except RedisError as error:
            return not self.failed(error)
        self.succeeded()
        return True


def outage_for(url):
    """The one RedisOutage of `url` in this process."""
    outage = _outages.get(url)
    if outage is None:
        with _outages_lock:
            outage = _outages.setdefault(url, RedisOutage(url))
    return outage


def redis_state(app):
    """`ok`, `degraded` (Redis set but unreachable: the app serves, limits count in the database,
    wake-ups wait for the sweep) or `not_configured` (no REDIS_URL: in-process jobs); what /healthz
    and `doctor` report."""
    url = app.config.get("REDIS_URL")
    if not url:
        return "not_configured"
    return "ok" if outage_for(url).probe() else "degraded"


def redacted(url):
    """`host:port/db` of a Redis URL, never its password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or ''}"
