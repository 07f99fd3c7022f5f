"""Test keys, webhook endpoints and their verifying receivers (events and endpoints tests)."""

import pytest

from gateway.accounts.api_keys import generate_key
from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.endpoints import create_endpoint
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.webhook_support import WebhookReceiver


@pytest.fixture
def test_auth(brand):
    """Authorization header of a read+write TEST key of `brand` (livemode false)."""
    _, secret = generate_key(brand, "test key", ["read", "write"], livemode=False)
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def endpoint_receivers(brand):
    """Make endpoints of `brand`, each with a real local receiver holding that endpoint's secret:
    `make(events, livemode=True, enabled=True)` returns (endpoint, receiver). Every receiver must
    never see a webhook that fails verification with its own secret."""
    made = []

    def make(events=("*",), livemode=True, enabled=True):
        receiver = WebhookReceiver("placeholder")
        endpoint, secret = create_endpoint(brand, livemode, receiver.url, list(events))
        receiver.secret = secret
        if not enabled:
            endpoint.enabled = False
            db.session.commit()
        made.append(receiver)
        return endpoint, receiver

    yield make
    for receiver in made:
        receiver.close()
    assert all(r.rejected == [] for r in made), "a webhook failed its endpoint's verification"


def deliver_all():
    """Make the first attempt of every pending delivery, in id order (as a worker would)."""
    db.session.expire_all()
    ids = db.session.execute(
        db.select(WebhookDelivery.id)
        .where(WebhookDelivery.status == "pending")
        .order_by(WebhookDelivery.id)
    ).scalars()
    return [deliver_webhook(delivery_id) for delivery_id in list(ids)]
