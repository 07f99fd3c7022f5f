"""The per-key API rate limit (API_RATE_LIMIT), counted in Redis when REDIS_URL is set.

It calls the `limits` library (the engine under Flask-Limiter) directly: one counter hit per
request, which keeps the limiter off the API's hot path.
"""
import hashlib
import math
import time

from flask import current_app, request
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from ..errors import ApiError


def api_limiter(app):
    """The app's (limiter, limit) pair, built once from its configuration."""
    state = app.extensions.get("gateway_rate_limit")
    if state is None:
        storage = storage_from_string(app.config["RATELIMIT_STORAGE_URI"])
        state = (FixedWindowRateLimiter(storage), parse(app.config["API_RATE_LIMIT"]))
        app.extensions["gateway_rate_limit"] = state
    return state


def api_key_identity():
    """Rate-limit bucket: a digest of the presented credential, else the client address."""
    header = request.headers.get("Authorization", "")
    if header:
        return "key:" + hashlib.sha256(header.encode()).hexdigest()[:32]
    return "addr:" + (request.remote_addr or "unknown")


def check_api_rate_limit():
    """Count this request against its key's limit; 429 RATE_LIMITED with Retry-After past it."""
    app = current_app._get_current_object()
    if not app.config.get("RATELIMIT_ENABLED", True):
        return
    limiter, limit = api_limiter(app)
    identity = api_key_identity()
    if limiter.hit(limit, "api", identity):
        return
    reset_at = limiter.get_window_stats(limit, "api", identity).reset_time
    retry_after = max(1, math.ceil(reset_at - time.time()))
    raise ApiError(429, "RATE_LIMITED", "Too many requests for this API key; slow down.",
                   headers={"Retry-After": str(retry_after)})
