"""The per-key API rate limit (API_RATE_LIMIT) and the per-address limit on refused keys
(API_AUTH_FAILURE_LIMIT), which made-up keys cannot dodge by changing each time.

It calls the `limits` library (the engine under Flask-Limiter) directly, one counter hit per
request, over the store every process shares (gateway.accounts.rate_limit_store): Redis while it
answers, else the database. The per-key rate of a deployment without Redis, and every limit with
RATELIMIT_STORAGE_URI=memory://, count in this process instead, in a plain fixed-window dict:
`limits`' memory storage starts a timer thread to expire its keys, which costs more than the check.
"""

import math
import threading
import time

from flask import current_app, request
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from ..errors import ApiError

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
    """The same check over the shared `limits` storage (gateway.accounts.rate_limit_store): Redis or
    the database.
    """

    def __init__(self, storage_uri, limit, namespace):
        self.limiter = FixedWindowRateLimiter(storage_from_string(storage_uri))
        self.limit, self.namespace = limit, namespace

    def hit(self, identity):
        if self.limiter.hit(self.limit, self.namespace, identity):
            return True, None
        return False, self.limiter.get_window_stats(self.limit, self.namespace, identity).reset_time


def limiter_for(app, setting):
    """The app's limiter for the limit named by `setting` (e.g. API_RATE_LIMIT), built once."""
    limiters = app.extensions.setdefault("gateway_rate_limits", {})
    limiter = limiters.get(setting)
    if limiter is None:
        uri, limit = app.config["RATELIMIT_STORAGE_URI"], parse(app.config[setting])
        # Without Redis the shared store is the database: a write on every API request. The per-key
        # request rate is a throughput cap, not a guard against guessing, so it counts per process
        # then; refused keys (API_AUTH_FAILURE_LIMIT) always count where every process sees them.
        per_process = setting in PER_PROCESS_WITHOUT_REDIS and not app.config.get("REDIS_URL")
        limiter = (
            LocalFixedWindow(limit)
            if uri.startswith("memory://") or per_process
            else SharedFixedWindow(uri, limit, setting)
        )
        limiters[setting] = limiter
    return limiter


def address_identity():
    """Rate-limit bucket of the client's address."""
    return "addr:" + (request.remote_addr or "unknown")


def api_key_identity(key):
    """Rate-limit bucket of a resolved API key: its id, however the header spelled it."""
    return f"key:{key.id}"


def count_against(setting, identity, message):
    """Count one request of `identity` against the limit `setting`; 429 RATE_LIMITED with
    Retry-After past it.
    """
    app = current_app._get_current_object()
    if not app.config.get("RATELIMIT_ENABLED", True):
        return
    allowed, reset_at = limiter_for(app, setting).hit(identity)
    if allowed:
        return
    retry_after = max(1, math.ceil(reset_at - time.time()))
    raise ApiError(429, "RATE_LIMITED", message, headers={"Retry-After": str(retry_after)})


def check_api_rate_limit(key=None):
    """Count this request against its key's limit (the address's without a key), before its scopes
    and work.

    Keyed by the resolved key: spelling one key's header differently (`bearer`, extra spaces) must
    not open a fresh bucket each time.
    """
    identity = api_key_identity(key) if key is not None else address_identity()
    count_against("API_RATE_LIMIT", identity, "Too many requests for this API key; slow down.")


def count_refused_key():
    """Count a refused key against the client's address: each made-up key would otherwise get a
    limit of its own.
    """
    count_against(
        "API_AUTH_FAILURE_LIMIT",
        address_identity(),
        "Too many requests with unknown or revoked API keys from this address; slow down.",
    )
