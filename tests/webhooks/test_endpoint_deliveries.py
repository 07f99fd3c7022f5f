"""Deliveries to webhook endpoints through real local receivers: each endpoint gets the events it
chose, of its mode, signed with its own secret in the usual headers; a disabled or deleted one gets
nothing; the payment's callback_url still gets its events, signed with the brand's secret."""

import hashlib
import hmac
from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.lifecycle import cancel_payment
from gateway.webhooks.endpoints import delete_endpoint, rotate_endpoint_secret, update_endpoint
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.endpoint_support import deliver_all, endpoint_receivers  # noqa: F401 - fixture
from tests.factories import PaymentFactory, completed_payment
from tests.webhook_support import receiver  # noqa: F401,F811 - fixture


def hex_hmac(secret, body):
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def v1_signatures(header):
    """(t, [v1 …]) of an X-Service-Signature-V1 header."""
    parts = [part.partition("=") for part in header.split(",")]
    return (
        next(value for name, _, value in parts if name == "t"),
        [value for name, _, value in parts if name == "v1"],
    )


def test_each_endpoint_receives_only_the_events_it_chose(brand, endpoint_receivers):
    _, completions = endpoint_receivers(["payment.completed"])
    _, cancellations = endpoint_receivers(["payment.cancelled"])
    _, everything = endpoint_receivers(["*"])

    paid = completed_payment(brand=brand)
    cancelled = PaymentFactory(brand=brand)
    cancel_payment(cancelled)
    deliver_all()

    assert [(e["event"], e["data"]["payment_id"]) for e in completions.events()] == [
        ("payment.completed", paid.public_id)
    ]
    assert [(e["event"], e["data"]["payment_id"]) for e in cancellations.events()] == [
        ("payment.cancelled", cancelled.public_id)
    ]
    assert [e["event"] for e in everything.events()] == ["payment.completed", "payment.cancelled"]


def test_each_endpoint_verifies_with_its_own_secret_in_every_header(brand, endpoint_receivers):
    first, first_receiver = endpoint_receivers()
    second, second_receiver = endpoint_receivers()
    completed_payment(brand=brand)
    deliver_all()

    for receiver_ in (first_receiver, second_receiver):
        [hit] = receiver_.received
        headers, raw = hit["headers"], hit["raw"]
        assert headers["X-Service-Signature"] == hex_hmac(receiver_.secret, raw)
        assert headers["X-Signature"] == headers["X-Service-Signature"]
        assert headers["X-Service-Signature"] != hex_hmac(brand.webhook_secret, raw)
        t, [v1] = v1_signatures(headers["X-Service-Signature-V1"])
        assert t == headers["X-Service-Timestamp"]
        assert v1 == hex_hmac(receiver_.secret, t.encode() + b"." + raw)
        assert headers["X-Service-Event"] == "payment.completed"
        assert "X-Service-Signature-Previous" not in headers
    assert first_receiver.secret != second_receiver.secret
    # The same event, the same body, to both.
    assert first_receiver.received[0]["raw"] == second_receiver.received[0]["raw"]


def test_the_callback_url_keeps_getting_its_payments_events_signed_with_the_brand_secret(
    brand, receiver, endpoint_receivers
):
    endpoint, endpoint_receiver = endpoint_receivers(["payment.completed"])
    completed_payment(brand=brand, callback_url=receiver.url)
    deliver_all()

    [callback_body] = receiver.events()  # verified with the brand's secret by the fixture
    [endpoint_body] = endpoint_receiver.events()
    assert callback_body["id"] == endpoint_body["id"]
    records = db.session.execute(db.select(WebhookDelivery).order_by(WebhookDelivery.id)).scalars()
    assert [(r.url, r.endpoint_id, r.event_id, r.status) for r in records] == [
        (receiver.url, None, callback_body["id"], "sent"),
        (endpoint_receiver.url, endpoint.id, callback_body["id"], "sent"),
    ]


def test_a_disabled_endpoint_receives_nothing(brand, endpoint_receivers):
    _, disabled = endpoint_receivers(["*"], enabled=False)
    enabled, live = endpoint_receivers(["*"])
    completed_payment(brand=brand)
    # Recorded while enabled, then turned off before its attempt: not sent either.
    update_endpoint(enabled, {"enabled": False})
    deliver_all()

    assert disabled.received == [] and live.received == []
    [record] = db.session.execute(db.select(WebhookDelivery)).scalars()
    assert record.endpoint_id == enabled.id and record.status == "pending"
    [attempt] = db.session.execute(db.select(WebhookAttempt)).scalars()
    assert attempt.error == "The webhook endpoint is disabled." and attempt.response_status is None


def test_a_deleted_endpoint_receives_nothing_more(brand, endpoint_receivers):
    endpoint, endpoint_receiver = endpoint_receivers(["*"])
    completed_payment(brand=brand)
    delete_endpoint(endpoint)
    completed_payment(brand=brand)
    deliver_all()

    assert endpoint_receiver.received == []
    [record] = db.session.execute(db.select(WebhookDelivery)).scalars()  # the first event's only
    assert record.last_error == "The webhook endpoint was deleted."


def test_live_events_go_to_live_endpoints_and_test_events_to_test_ones(brand, endpoint_receivers):
    _, live = endpoint_receivers(["*"])
    _, test = endpoint_receivers(["*"], livemode=False)
    live_payment = completed_payment(brand=brand)
    test_payment = completed_payment(brand=brand, livemode=False)
    deliver_all()

    assert [(e["data"]["payment_id"], e["livemode"]) for e in live.events()] == [
        (live_payment.public_id, True)
    ]
    assert [(e["data"]["payment_id"], e["livemode"]) for e in test.events()] == [
        (test_payment.public_id, False)
    ]


def test_a_rotated_endpoint_secret_overlaps_then_stops_signing(brand, endpoint_receivers):
    endpoint, endpoint_receiver = endpoint_receivers(["payment.completed"])
    old = endpoint_receiver.secret
    with freeze_time(utcnow()) as clock:
        new = rotate_endpoint_secret(endpoint, overlap=3600)
        endpoint_receiver.secret = new
        completed_payment(brand=brand)
        deliver_all()
        clock.tick(timedelta(seconds=3601))
        completed_payment(brand=brand)
        deliver_all()

    during, after = endpoint_receiver.received
    assert during["headers"]["X-Service-Signature"] == hex_hmac(new, during["raw"])
    assert during["headers"]["X-Service-Signature-Previous"] == hex_hmac(old, during["raw"])
    t, v1s = v1_signatures(during["headers"]["X-Service-Signature-V1"])
    message = t.encode() + b"." + during["raw"]
    assert v1s == [hex_hmac(new, message), hex_hmac(old, message)]
    assert "X-Service-Signature-Previous" not in after["headers"]
    assert len(v1_signatures(after["headers"]["X-Service-Signature-V1"])[1]) == 1


def test_rotation_without_overlap_drops_the_old_secret_at_once(brand, endpoint_receivers):
    endpoint, endpoint_receiver = endpoint_receivers(["payment.completed"])
    endpoint_receiver.secret = rotate_endpoint_secret(endpoint, overlap=0)
    completed_payment(brand=brand)
    deliver_all()
    [hit] = endpoint_receiver.received
    assert "X-Service-Signature-Previous" not in hit["headers"]
