"""Webhook endpoints: several URLs per brand and mode, each with its chosen events and its own
secret (sealed at rest, shown once, rotated under the brand secret's overlap rule)."""

import secrets

from ..accounts.models.brand import new_webhook_secret
from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import field_error, invalid_state, not_found
from ..extensions import db
from .callback_urls import check_callback_url
from .deliveries import overlap_rotation
from .endpoint_secrets import seal_secret
from .events import EVENTS
from .models.endpoint import ALL_EVENTS, WebhookEndpoint

# Every event goes to each endpoint that chose it: a bound on the fan-out of one event.
MAX_ENDPOINTS = 16  # per brand and mode
CHOICES = (ALL_EVENTS, *EVENTS)


def new_endpoint_id():
    """A webhook endpoint's public id: `we_` + 96 random bits in hex."""
    return "we_" + secrets.token_hex(12)


def checked_events(events, field="enabled_events"):
    """The chosen event types, each once in the order given; ValidationFailed on `field` for an
    empty list or a type the gateway does not send."""
    if not isinstance(events, list | tuple) or not events:
        raise field_error(field, 'Choose at least one event type, or "*" for every event.')
    unknown = [event for event in events if event not in CHOICES]
    if unknown:
        raise field_error(
            field, f"Unknown event type {unknown[0]!r}; one of: {', '.join(CHOICES)}.", "unknown"
        )
    return list(dict.fromkeys(events))


def checked_url(url, field="url"):
    """The URL, stripped; refused on `field` where webhooks may not go (callback_urls.py)."""
    url = (url or "").strip()
    if not url:
        raise field_error(field, "A URL is required.", "required")
    check_callback_url(url, field)
    return url


def create_endpoint(brand, livemode, url, enabled_events, description=None, enabled=True):
    """Add an endpoint of this mode and commit; returns (endpoint, secret), the secret only here."""
    url, events = checked_url(url), checked_events(enabled_events)
    if len(endpoints_of(brand, livemode)) >= MAX_ENDPOINTS:
        raise invalid_state(f"A brand has at most {MAX_ENDPOINTS} webhook endpoints per mode.")
    secret, public_id = new_webhook_secret(), new_endpoint_id()
    endpoint = WebhookEndpoint(
        public_id=public_id,
        brand_id=brand.id,
        url=url,
        description=(description or "").strip() or None,
        enabled_events=events,
        enabled=bool(enabled),
        livemode=bool(livemode),
        secret_sealed=seal_secret(secret, public_id),
    )
    db.session.add(endpoint)
    commit_work()
    return endpoint, secret


def endpoints_query(brand, livemode=None):
    """The brand's endpoints of a mode (None: both), newest first, deleted ones left out."""
    query = db.select(WebhookEndpoint).where(
        WebhookEndpoint.brand_id == brand.id, WebhookEndpoint.deleted_at.is_(None)
    )
    if livemode is not None:
        query = query.where(WebhookEndpoint.livemode.is_(bool(livemode)))
    return query.order_by(WebhookEndpoint.created_at.desc(), WebhookEndpoint.id.desc())


def endpoints_of(brand, livemode=None):
    """endpoints_query's rows."""
    return db.session.execute(endpoints_query(brand, livemode)).scalars().all()


def get_endpoint(brand, public_id, livemode=None):
    """The brand's endpoint of this mode (None: either) by id; NotFound for anything else."""
    endpoint = None
    if isinstance(public_id, str) and public_id.startswith("we_") and len(public_id) <= 40:
        endpoint = db.session.execute(
            endpoints_query(brand, livemode).where(WebhookEndpoint.public_id == public_id)
        ).scalar_one_or_none()
    if endpoint is None:
        raise not_found("webhook_endpoint")
    return endpoint


def update_endpoint(endpoint, changes):
    """Change url, enabled_events, description or enabled; returns {field: [from, to]} of what
    changed (committed)."""
    values = {}
    if "url" in changes:
        values["url"] = checked_url(changes["url"])
    if "enabled_events" in changes:
        values["enabled_events"] = checked_events(changes["enabled_events"])
    if "description" in changes:
        values["description"] = (changes["description"] or "").strip() or None
    if "enabled" in changes:
        values["enabled"] = bool(changes["enabled"])
    changed = {
        name: [getattr(endpoint, name), value]
        for name, value in values.items()
        if getattr(endpoint, name) != value
    }
    for name, (_, value) in changed.items():
        setattr(endpoint, name, value)
    commit_work()
    return changed


def delete_endpoint(endpoint):
    """Delete an endpoint: nothing is sent to it from now on, its pending retries included (their
    attempts fail, webhooks/delivery.py); its delivery records stay, naming it."""
    endpoint.deleted_at = utcnow()
    endpoint.enabled = False
    commit_work()
    return endpoint


def rotate_endpoint_secret(endpoint, overlap=None):
    """Give the endpoint a new secret (returned, shown once); the replaced one still signs for
    `overlap` seconds, by the brand secret's rule (deliveries.py:overlap_rotation)."""
    new = new_webhook_secret()
    db.session.execute(
        db.update(WebhookEndpoint)
        .where(WebhookEndpoint.id == endpoint.id)
        .values(
            overlap_rotation(
                WebhookEndpoint.secret_sealed,
                WebhookEndpoint.secret_previous_sealed,
                WebhookEndpoint.secret_previous_until,
                seal_secret(new, endpoint.public_id),
                overlap,
            )
        )
        .execution_options(synchronize_session=False)
    )
    commit_work()
    db.session.refresh(endpoint)
    return new
