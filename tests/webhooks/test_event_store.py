"""Every event is stored (the events API) with the webhook body it is sent as, in the same
transaction as the change it tells of, with or without a URL to send it to; kept 30 days."""

import json
from datetime import timedelta

import pytest

from gateway.answer_commit import unit_of_work
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.jobs import PERIODIC
from gateway.payments.lifecycle import cancel_payment
from gateway.payments.refunds import create_refund
from gateway.webhooks.event_log import KEPT, prune_events
from gateway.webhooks.events import emit_event
from gateway.webhooks.models.event import Event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.endpoint_support import endpoint_receivers, test_auth  # noqa: F401 - fixtures
from tests.factories import PaymentFactory, completed_payment


def events():
    db.session.expire_all()
    return db.session.execute(db.select(Event).order_by(Event.id)).scalars().all()


def test_an_event_is_stored_without_any_url_to_send_it_to(brand):
    payment = completed_payment(brand=brand)

    [event] = events()
    assert db.session.execute(db.select(WebhookDelivery)).first() is None
    body = json.loads(event.payload)
    assert (event.type, event.brand_id, event.livemode) == ("payment.completed", brand.id, True)
    assert body["id"] == event.public_id and event.public_id.startswith("evt_")
    assert event.data == body["data"] and event.data["payment_id"] == payment.public_id


def test_the_webhook_body_is_the_stored_event_and_carries_its_id(brand):
    payment = PaymentFactory(brand=brand, callback_url="https://merchant.example/hooks")
    cancel_payment(payment)

    [event] = events()
    [delivery] = db.session.execute(db.select(WebhookDelivery)).scalars()
    body = json.loads(delivery.payload)
    assert set(body) == {"id", "event", "created", "livemode", "data"}
    assert delivery.payload == event.payload
    assert body["id"] == delivery.event_id == event.public_id
    assert body["event"] == event.type == "payment.cancelled"


def test_a_rolled_back_change_leaves_no_event(brand):
    payment = PaymentFactory(brand=brand, callback_url="https://merchant.example/hooks")
    with pytest.raises(RuntimeError), unit_of_work():
        cancel_payment(payment)
        assert len(db.session.execute(db.select(Event)).all()) == 1  # there, uncommitted
        raise RuntimeError("the request failed after the change")

    assert events() == []
    assert db.session.execute(db.select(WebhookDelivery)).first() is None
    db.session.refresh(payment)
    assert payment.status == "created"


def test_a_refund_event_takes_its_payments_mode(brand):
    payment = completed_payment(brand=brand, livemode=False)
    create_refund(brand, payment.transaction.trx_id, payment.amount, "test", livemode=False)
    assert [(e.type, e.livemode) for e in events()] == [
        ("payment.completed", False),
        ("refund.completed", False),
    ]


def test_a_test_webhook_takes_the_calling_keys_mode(client, auth, test_auth, endpoint_receivers):
    _, live = endpoint_receivers(["webhook.test"])
    _, test = endpoint_receivers(["webhook.test"], livemode=False)
    url = "https://merchant.example/hooks"
    assert (
        client.post("/api/v1/webhooks/tests", json={"url": url}, headers=test_auth).status_code
        == 201
    )
    assert client.post("/api/v1/webhooks/tests", json={"url": url}, headers=auth).status_code == 201

    assert [(e.type, e.livemode) for e in events()] == [
        ("webhook.test", False),
        ("webhook.test", True),
    ]
    to_endpoints = db.session.execute(
        db.select(WebhookDelivery.url)
        .where(WebhookDelivery.endpoint_id.is_not(None))
        .order_by(WebhookDelivery.id)
    ).scalars()
    assert list(to_endpoints) == [test.url, live.url]


def test_an_emission_without_a_payment_defaults_to_live(brand):
    emit_event("webhook.test", brand, url="https://merchant.example/hooks")
    db.session.commit()
    assert [e.livemode for e in events()] == [True]


def test_events_are_kept_thirty_days_then_pruned_by_a_periodic_job(brand):
    assert ("prune-events", "gateway.webhooks.event_log.prune_events", 3600) in PERIODIC
    completed_payment(brand=brand)
    completed_payment(brand=brand)
    old, young = events()
    old.created_at = utcnow() - KEPT - timedelta(minutes=1)
    young.created_at = utcnow() - KEPT + timedelta(minutes=1)
    db.session.commit()
    assert KEPT >= timedelta(days=30)

    assert prune_events() == 1
    assert [e.public_id for e in events()] == [young.public_id]
