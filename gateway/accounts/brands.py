"""Brands: the first one of an install, and a brand's settings (name, look, origin, currencies, time
zone, …).
"""

import re
from decimal import Decimal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..answer_commit import commit_work
from ..domain_errors import field_error
from ..extensions import db
from ..money import InvalidAmount, parse_amount
from ..security_headers import csp_source
from .api_keys import add_key
from .models.brand import Brand
from .models.user import User

HEX_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
CURRENCY_CODE = re.compile(r"^[A-Z]{3}$")
MAX_URL_LENGTH = 2048
# A payment stays open at least a minute and at most a day.
TTL_RANGE = (60, 24 * 60 * 60)


def create_first_brand(name, admin_email, admin_password, key_scopes=("read", "write")):
    """The brand, its owner and a key `default` (read+write unless told), in one commit.

    Returns (brand, admin, key secret); the secret exists only in this return value. The bootstrap
    command runs it in a unit of work, which commits it or, on a failure, keeps none of it.
    """
    brand = Brand(name=name, slug="default")
    db.session.add(brand)
    db.session.flush()
    admin = User(brand_id=brand.id, email=admin_email, name="Administrator", role="owner")
    admin.set_password(admin_password)
    db.session.add(admin)
    _, secret = add_key(brand, "default", list(key_scopes))
    commit_work()
    return brand, admin, secret


def checked_url(field, value):
    """An absolute http(s) URL without a trailing slash, None when blank, else ValidationFailed
    naming the field.
    """
    value = (value or "").strip()
    if not value:
        return None
    parts = urlsplit(value)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or len(value) > MAX_URL_LENGTH
        # A host a CSP cannot name (`;`, spaces, quotes…) would add directives to the checkout's
        # policy.
        or not csp_source(value)
        or any(char.isspace() or char in "\"'<>" for char in value)
    ):
        raise field_error(field, "Enter an absolute http:// or https:// address.")
    return value.rstrip("/") if field == "base_url" else value


def checked_currencies(value):
    """Comma-separated ISO 4217 codes (a list is accepted too), upper-cased and de-duplicated."""
    codes = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    cleaned = []
    for code in (str(code).strip().upper() for code in codes):
        if code and code not in cleaned:
            if not CURRENCY_CODE.match(code):
                raise field_error("currencies", f"{code} is not a three-letter currency code.")
            cleaned.append(code)
    if not cleaned:
        raise field_error("currencies", "Accept at least one currency.")
    return ",".join(cleaned)


def checked_refund_limit(value):
    """The staff refund limit: None (no limit), or a Decimal amount of zero (staff cannot refund) or
    more.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        value = parse_amount(str(value) if isinstance(value, Decimal) else value)
    except InvalidAmount:
        raise field_error("staff_refund_limit", "Enter an amount such as 0 or 2500.50.") from None
    return value


def checked_setting(name, value):
    """One setting validated and normalised, or ValidationFailed naming it."""
    if name == "name":
        value = (value or "").strip()
        if not 1 <= len(value) <= 120:
            raise field_error("name", "The brand name needs 1 to 120 characters.")
    elif name in ("logo_url", "base_url"):
        value = checked_url(name, value)
    elif name == "primary_color":
        if not HEX_COLOR.match(value or ""):
            raise field_error("primary_color", "Use a colour such as #0f766e.")
        value = value.lower()
    elif name == "timezone":
        try:
            ZoneInfo(value or "")
        except (ZoneInfoNotFoundError, ValueError):
            raise field_error("timezone", "Use a time zone name such as Asia/Dhaka.") from None
    elif name == "currencies":
        value = checked_currencies(value)
    elif name == "payment_ttl":
        if value is not None and not (
            isinstance(value, int) and TTL_RANGE[0] <= value <= TTL_RANGE[1]
        ):
            raise field_error("payment_ttl", "A payment lifetime is between 1 minute and 24 hours.")
    elif name in ("receipt_sms_enabled", "require_two_factor", "refund_fee"):
        value = bool(value)
    elif name == "staff_refund_limit":
        value = checked_refund_limit(value)
    else:
        raise field_error(name, f"{name} cannot be changed.")
    return value


def update_brand_settings(brand, changes):
    """Apply validated settings (all or nothing); returns {field: [old, new]} for what changed."""
    cleaned = {name: checked_setting(name, value) for name, value in changes.items()}
    changed = {}
    for name, value in cleaned.items():
        old = getattr(brand, name)
        if old != value:
            changed[name] = [old, value]
            setattr(brand, name, value)
    commit_work()
    return changed


def accepted_currencies():
    """Every currency a brand of this deployment accepts, each once, in the brands' order."""
    codes = {}
    for (currencies,) in db.session.execute(db.select(Brand.currencies).order_by(Brand.id)):
        codes.update(dict.fromkeys(code.strip().upper() for code in currencies.split(",")))
    return [code for code in codes if code]
