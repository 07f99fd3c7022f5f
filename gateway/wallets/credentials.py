"""An API method's credentials: added with its secrets sealed, opened only to call the wallet,
shown back only as their last characters."""

import json
from urllib.parse import urlsplit

from flask import current_app

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import DomainError, field_error, not_found
from ..extensions import db
from ..payments.methods import hidden_number, next_position
from ..payments.models.payment_method import API, API_PROVIDERS, PaymentMethod
from ..sealing import InvalidTag, seal, unseal
from . import provider_api
from .models import WalletCredential

PURPOSE = "wallet-credentials"
LONGEST_SECRET = 4096  # a PEM key fits


def bound_to(method_id):
    """The text a method's sealed secrets are bound to: they open for no other method."""
    return f"wallet-credentials:{method_id}"


def checked_base_url(value):
    """The wallet's API root without a trailing slash; https, except http in development and tests
    (a local stand-in)."""
    url = str(value or "").strip().rstrip("/")
    parts = urlsplit(url)
    allowed = ("https",) if current_app.config.get("APP_ENV") == "production" else ("https", "http")
    if parts.scheme not in allowed or not parts.hostname or len(url) > 500:
        raise field_error("base_url", "Base URL must be the wallet's https API root.")
    if parts.query or parts.fragment or parts.username:
        raise field_error("base_url", "Base URL must be the wallet's https API root.")
    return url


def checked_secrets(fields, given):
    """The provider's secrets (SECRET_FIELDS), each given, trimmed and of sane length."""
    cleaned = {}
    for name in fields:
        value = str(given.get(name) or "").strip()
        if not value:
            raise field_error(name, f"{name.replace('_', ' ').capitalize()} is required.")
        if len(value) > LONGEST_SECRET:
            raise field_error(name, f"{name.replace('_', ' ').capitalize()} is too long.")
        cleaned[name] = value
    return cleaned


def add_api_method(brand, provider, base_url, given_secrets, enabled=True, display_name=None):
    """Add a wallet's API method (docs/wallet-apis.md) with its secrets sealed; last in order."""
    if provider not in API_PROVIDERS:
        raise field_error("provider", f"Provider must be one of {', '.join(API_PROVIDERS)}.")
    try:
        api = provider_api(provider)
    except ModuleNotFoundError:  # a provider listed before its module is written
        raise field_error("provider", f"The {provider} API is not available yet.") from None
    url = checked_base_url(base_url)
    values = checked_secrets(api.SECRET_FIELDS, given_secrets)
    method = PaymentMethod(
        brand_id=brand.id,
        provider=provider,
        kind=API,
        number=hidden_number(API),
        enabled=bool(enabled),
        position=next_position(brand),
        display_name=(display_name or "").strip()[:80] or None,
    )
    db.session.add(method)
    db.session.flush()
    now = utcnow()
    db.session.add(
        WalletCredential(
            method_id=method.id,
            base_url=url,
            sealed=seal(json.dumps(values).encode(), PURPOSE, bound_to(method.id)),
            created_at=now,
            updated_at=now,
        )
    )
    commit_work()
    return method


def credential_row(method):
    """The method's wallet_credentials row; NotFound when it has none."""
    row = db.session.execute(
        db.select(WalletCredential).where(WalletCredential.method_id == method.id)
    ).scalar_one_or_none()
    if row is None:
        raise not_found("wallet_credentials")
    return row


def opened(method):
    """(base_url, {secret name: value}) of an API method, for a call to its wallet only."""
    row = credential_row(method)
    try:
        raw, _ = unseal(row.sealed, PURPOSE, bound_to(method.id))
    except (InvalidTag, ValueError):
        raise not_found("wallet_credentials") from None
    return row.base_url, json.loads(raw)


def masked(method):
    """What the panel shows of an API method's credentials: the base URL and each secret's last
    four characters."""
    try:
        base_url, values = opened(method)
    except DomainError:  # sealed under a SECRET_KEY no longer in use: add the method again
        return None, {}
    return base_url, {
        name: "…" + value[-4:] if len(value) > 8 else "…" for name, value in values.items()
    }
