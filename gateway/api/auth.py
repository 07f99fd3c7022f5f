"""Bearer-key authentication and scope checks for every API request."""

from datetime import timedelta

from flask import g, request

from ..accounts.api_keys import find_active_key
from ..accounts.models.api_key import ApiKey
from ..accounts.models.brand import Brand
from ..accounts.models.user import User
from ..accounts.roles import ADMIN_ROLES
from ..clock import utcnow
from ..errors import ApiError
from ..extensions import db
from ..livemode import use_livemode
from .rate_limit import check_api_rate_limit, count_refused_key

# last_used_at is refreshed at most this often, so reads do not become writes.
LAST_USED_RESOLUTION = timedelta(seconds=60)
METHOD_SCOPES = {"GET": {"read"}, "HEAD": {"read"}, "OPTIONS": set()}
# Built once: Session.get builds its query anew on every call, which costs more than running this.
BRAND_BY_ID = db.select(Brand).where(Brand.id == db.bindparam("brand_id"))


def bearer_token():
    """The token of an `Authorization: Bearer …` header, or None when absent."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def authenticate(extra_scopes=(), companion=None, params=None, with_brand=False):
    """Resolve the key, its brand and check the scopes this request needs.

    With a `companion` subquery (accounts.api_keys.key_with) and its `params`, the key's row also
    carries what the view reads (g.api_key), in the same round trip; `with_brand`, the brand that
    caller_brand() then returns.
    """
    token = bearer_token()
    if token is None:
        check_api_rate_limit()
        raise ApiError(
            401, "MISSING_TOKEN", "Send your API key as `Authorization: Bearer <API_KEY>`."
        )
    key = find_active_key(token, companion, params, with_brand) if token else None
    if key is None:
        count_refused_key()
        raise ApiError(401, "INVALID_TOKEN", "The API key does not exist or has been revoked.")
    check_api_rate_limit(key)
    needed = METHOD_SCOPES.get(request.method, {"write"}) | set(extra_scopes)
    missing = needed.difference(key.scopes.split(","))
    if missing:
        raise ApiError(
            403,
            "INSUFFICIENT_SCOPE",
            f"This key lacks the scope(s) {', '.join(sorted(missing))} for this action.",
        )
    g.api_key = key
    g.brand_id = key.brand_id
    use_livemode(key.livemode)  # what the request may see and make (gateway/livemode.py)
    # Set on every request: an app context shared by several (a test, a CLI command) must not keep
    # another request's brand.
    g.brand = key.Brand if with_brand else None
    touch_last_used(key)


def caller_brand():
    """The calling key's brand: read with the key for a view registered with
    `resource.brand_with_key`, else loaded on first use (reading a payment back needs only
    `g.brand_id`)."""
    brand = g.get("brand")
    if brand is None:
        brand = g.brand = db.session.execute(BRAND_BY_ID, {"brand_id": g.brand_id}).scalar_one()
    return brand


def touch_last_used(key):
    """Record use of the key, writing at most once a minute per key."""
    now = utcnow()
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
        db.session.execute(
            db.update(ApiKey)
            .where(ApiKey.id == key.id)
            .values(last_used_at=now)
            .execution_options(synchronize_session=False)
        )
        db.session.commit()


def require_super_admin():
    """Key operations also need the X-Super-Admin-Email of an active owner or admin of the key's
    brand.

    Addresses are stored lower-cased, so the header is lowered and the column compared as is (its
    index serves).
    """
    email = (request.headers.get("X-Super-Admin-Email") or "").strip().lower()
    if not email:
        raise ApiError(400, "SUPER_ADMIN_EMAIL_REQUIRED", "Send the X-Super-Admin-Email header.")
    user = db.session.execute(
        db.select(User).where(
            User.email == email,
            User.brand_id == g.brand_id,
            User.role.in_(ADMIN_ROLES),
            User.active.is_(True),
        )
    ).scalar_one_or_none()
    if user is None:
        raise ApiError(
            403, "INVALID_SUPER_ADMIN", "That address is not an active super-administrator."
        )
    g.super_admin = user
