"""Every rate limit's counting: fixed windows in the shared store or in this process, the merchant
API's limits by setting, and `limited`, the decorator of the pages' and the companion app's routes.

The `limits` library counts over the store every process shares (gateway.accounts.rate_limit_store:
Redis while it answers, else the database). Only API_RATE_LIMIT, a throughput cap and no guard
against guessing, counts per process when there is no Redis; every limit does with
RATELIMIT_STORAGE_URI=memory://, in a plain fixed-window dict: `limits`' memory storage starts a
timer thread to expire its keys, which costs more than the check.

A limit runs only in the views it decorates: no hook of the app's, which every request would pay
for (Flask-Limiter's three cost each API call about 185 Python calls; docs/performance.md).
"""

import functools
import math
import threading
import time

from flask import current_app, request
from limits import parse, parse_many
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter
from werkzeug.exceptions import TooManyRequests

from .accounts import rate_limit_store  # noqa: F401 - registers the gateway+db and +redis stores

PER_PROCESS_WITHOUT_REDIS = {"API_RATE_LIMIT"}


class LocalFixedWindow:
    """A fixed window per identity, opened by its first hit, as `limits`' memory storage counts
    it."""

    # Expired windows are dropped every this many new windows, keeping memory bounded.
    SWEEP_EVERY = 1000

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

    def give_back(self, identity):
        """Uncount one request of this identity's open window (never below zero, never in a window
        opened after it was counted)."""
        with self.lock:
            window = self.windows.get(identity)
            if window is not None and window[1] > time.time() and window[0] > 0:
                window[0] -= 1


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

    def give_back(self, identity):
        """Uncount one request of this identity's open window, in the gateway's stores (a store of
        another kind keeps it: every attempt counts there)."""
        give_back = getattr(self.limiter.storage, "give_back", None)
        if give_back is not None:
            give_back(self.limit.key_for(self.namespace, identity))

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


def windows_for(app, limit, scope):
    """The app's windows of a view's `limit` (e.g. 10/minute;60/hour) under `scope`, shortest first,
    always in the shared store (or memory:// when configured), built once."""
    limiters = app.extensions.setdefault("gateway_rate_limits", {})
    windows = limiters.get((scope, limit))
    if windows is None:
        built = [fixed_window(app, item, scope) for item in sorted(parse_many(limit))]
        windows = limiters.setdefault((scope, limit), built)
    return windows


def limits_enabled(app):
    """Whether the app counts its rate limits at all (RATELIMIT_ENABLED), read on each request."""
    return app.config.get("RATELIMIT_ENABLED", True)


def seconds_until(reset_at):
    """Retry-After for a window ending at `reset_at`: whole seconds, at least 1."""
    return max(1, math.ceil(reset_at - time.time()))


def client_address():
    """The default bucket: the client's address (ProxyFix, when configured, makes it the real
    one)."""
    return request.remote_addr or "unknown"


def count_request(windows, identity):
    """Count the request in each window, shortest first: (the end of the first window it overfills
    or None, the windows that counted it). The windows after a full one are not counted."""
    counted = []
    for window in windows:
        allowed, reset_at = window.hit(identity)
        counted.append(window)
        if not allowed:
            return reset_at, counted
    return None, counted


def refusal(app, reset_at):
    """The 429 the request's blueprint renders (a page, an envelope), with Retry-After: the seconds
    to the window's end, set here once for every renderer.
    """
    seconds = seconds_until(reset_at)
    response = app.make_response(app.handle_http_exception(TooManyRequests(retry_after=seconds)))
    response.headers["Retry-After"] = str(seconds)
    return response


def limited(limit, key=client_address, *, scope, methods=None, counts=None):
    """Limit a view to `limit` (a rate such as 10/minute;60/hour, or a callable giving one) per
    bucket `key()`, counted under `scope` (routes naming one scope share its budget), for `methods`
    only (default: every method).

    Each request is counted before the view and refused with 429 past the limit. With `counts`, the
    count is given back afterwards unless counts(response) is true (a failed sign-in, a refused
    code): a view that raises counts nothing, and neither does a refusal. Counting first means
    requests sent side by side cannot all pass a window with one place left before any of them is
    counted. The 429 is the blueprint's own error page or envelope (its 429 handler), with
    Retry-After.
    """
    methods = frozenset(method.upper() for method in methods) if methods else None

    def decorate(view):
        @functools.wraps(view)
        def limited_view(*args, **kwargs):
            app = current_app._get_current_object()
            if not limits_enabled(app) or (methods is not None and request.method not in methods):
                return view(*args, **kwargs)
            windows = windows_for(app, limit() if callable(limit) else limit, scope)
            identity = key()
            full, counted = count_request(windows, identity)
            kept = counts is None  # without `counts` every request keeps its count
            try:
                if full is not None:
                    return refusal(app, full)
                if kept:
                    return view(*args, **kwargs)
                response = app.make_response(view(*args, **kwargs))
                kept = counts(response)
                return response
            finally:
                if not kept:
                    for window in counted:
                        window.give_back(identity)

        return limited_view

    return decorate
