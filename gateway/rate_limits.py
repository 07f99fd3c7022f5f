"""Every rate limit's counting: fixed windows in the shared store or in this process, and the
merchant API's limits by setting.

The `limits` library counts over the store every process shares (gateway.accounts.rate_limit_store:
Redis while it answers, else the database). Only API_RATE_LIMIT, a throughput cap and no guard
against guessing, counts per process when there is no Redis; every limit does with
RATELIMIT_STORAGE_URI=memory://, in a plain fixed-window dict: `limits`' memory storage starts a
timer thread to expire its keys, which costs more than the check.
"""

import math
import threading
import time

from flask import request
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from .accounts import rate_limit_store  # noqa: F401 - registers the gateway+db and +redis stores

PER_PROCESS_WITHOUT_REDIS = {"API_RATE_LIMIT"}


class LocalFixedWindow:
    """A fixed window per identity, opened by its first hit, as `limits`' memory storage counts
    it."""

    SWEEP_EVERY = (
        1000  # expired windows are dropped every this many new windows, keeping memory bounded
    )

    def __init__(self, limit):
        self.amount = limit.amount
        self.expiry = limit.get_expiry()
        self.windows = {}  # identity -> [count, reset_at]
        self.lock = threading.Lock()
        self.opened = 0

    def hit(self, identity):
        """(allowed, reset_at) after counting one request of this identity."""
        now = time.time()
        with self.lock:
            window = self.windows.get(identity)
            if window is None or window[1] <= now:
                window = self.windows[identity] = [0, now + self.expiry]
                self.opened += 1
                if self.opened % self.SWEEP_EVERY == 0:
                    self.windows = {
                        key: value for key, value in self.windows.items() if value[1] > now
                    }
                    self.windows[identity] = window
            window[0] += 1
            return window[0] <= self.amount, window[1]


class SharedFixedWindow:
    """The same window over the shared `limits` storage (gateway.accounts.rate_limit_store): Redis
    or the database.
    """

    def __init__(self, limiter, limit, namespace):
        self.limiter, self.limit, self.namespace = limiter, limit, namespace

    def hit(self, identity):
        """(allowed, reset_at) after counting one request of this identity."""
        if self.limiter.hit(self.limit, self.namespace, identity):
            return True, None
        return False, self.reset_at(identity)

    def reset_at(self, identity):
        return self.limiter.get_window_stats(self.limit, self.namespace, identity).reset_time


def shared_limiter(app):
    """The app's `limits` fixed-window limiter over its store (RATELIMIT_STORAGE_URI), built
    once."""
    limiter = app.extensions.get("gateway_rate_limit_store")
    if limiter is None:
        storage = storage_from_string(app.config["RATELIMIT_STORAGE_URI"])
        limiter = app.extensions.setdefault(
            "gateway_rate_limit_store", FixedWindowRateLimiter(storage)
        )
    return limiter


def fixed_window(app, limit, namespace, per_process=False):
    """A window for `limit` (a RateLimitItem): in this process when told or with memory://, else in
    the shared store."""
    if per_process or app.config["RATELIMIT_STORAGE_URI"].startswith("memory://"):
        return LocalFixedWindow(limit)
    return SharedFixedWindow(shared_limiter(app), limit, namespace)


def limiter_for(app, setting):
    """The app's window for the API limit named by `setting` (e.g. API_RATE_LIMIT), built once."""
    limiters = app.extensions.setdefault("gateway_rate_limits", {})
    limiter = limiters.get(setting)
    if limiter is None:
        # Without Redis the shared store is the database: a write on every API request. The per-key
        # request rate is a throughput cap, not a guard against guessing, so it counts per process
        # then; refused keys (API_AUTH_FAILURE_LIMIT) always count where every process sees them.
        per_process = setting in PER_PROCESS_WITHOUT_REDIS and not app.config.get("REDIS_URL")
        built = fixed_window(app, parse(app.config[setting]), setting, per_process)
        limiter = limiters.setdefault(setting, built)
    return limiter


def limits_enabled(app):
    """Whether the app counts its rate limits at all (RATELIMIT_ENABLED), read on each request."""
    return app.config.get("RATELIMIT_ENABLED", True)


def seconds_until(reset_at):
    """Retry-After for a window ending at `reset_at`: whole seconds, at least 1."""
    return max(1, math.ceil(reset_at - time.time()))


def client_address():
    """The client's address (ProxyFix, when configured, makes it the real one's)."""
    return request.remote_addr or "unknown"
