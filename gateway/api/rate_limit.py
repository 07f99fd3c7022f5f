"""The merchant API's limits: per key (API_RATE_LIMIT) and per address on refused keys
(API_AUTH_FAILURE_LIMIT), which made-up keys cannot dodge by changing each time.

Counted through gateway.rate_limits, one hit per request, before the request's scopes and work;
past a limit the answer is the envelope's 429 RATE_LIMITED with Retry-After.
"""

from flask import current_app

from ..errors import ApiError
from ..rate_limits import client_address, limiter_for, limits_enabled, seconds_until


def address_identity():
    """Rate-limit bucket of the client's address."""
    return "addr:" + client_address()


def api_key_identity(key):
    """Rate-limit bucket of a resolved API key: its id, however the header spelled it."""
    return f"key:{key.id}"


def count_against(setting, identity, message):
    """Count one request of `identity` against the limit `setting`; 429 RATE_LIMITED with
    Retry-After past it.
    """
    app = current_app._get_current_object()
    if not limits_enabled(app):
        return
    allowed, reset_at = limiter_for(app, setting).hit(identity)
    if allowed:
        return
    retry_after = seconds_until(reset_at)
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
