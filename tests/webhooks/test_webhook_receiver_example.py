"""examples/webhook_receiver.py against the real sender and the real API over HTTP."""

import importlib.util
import io
import threading
import time

import pytest
import requests
from werkzeug.serving import make_server

from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.delivery import (
    Claim,
    deliver_webhook,
    post_webhook,
    sign_payload,
    signature_v1,
)
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory
from tests.webhook_support import ROOT


def load_example():
    spec = importlib.util.spec_from_file_location(
        "webhook_receiver", ROOT / "examples" / "webhook_receiver.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def serve(wsgi_app):
    """Serve a WSGI app on a free local port in a thread; returns (base URL, server)."""
    server = make_server("127.0.0.1", 0, wsgi_app, threaded=True)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return f"http://127.0.0.1:{server.server_port}", server


class Recording:
    """WSGI middleware keeping the headers and raw body of every request it passes on."""

    def __init__(self, wsgi_app):
        self.wsgi_app, self.requests = wsgi_app, []

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        headers = {
            key[5:].replace("_", "-").title(): value
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        self.requests.append((headers, body))
        environ["wsgi.input"] = io.BytesIO(body)
        return self.wsgi_app(environ, start_response)


class Fulfilled(list):
    """The payments the receiver fulfilled; `received` holds every request that reached it."""

    received = ()


@pytest.fixture
def clock():
    """The receiver's clock: real time, plus `clock.ahead` seconds."""

    class Clock:
        ahead = 0

        def __call__(self):
            return time.time() + self.ahead

    return Clock()


@pytest.fixture
def merchant(app, brand, make_key, clock):
    """The example receiver, reading payments back through the gateway's API served over HTTP."""
    api_base, api_server = serve(app)
    fulfilled = Fulfilled()
    key = make_key(brand, ("read",))["Authorization"].removeprefix("Bearer ")
    receiver = Recording(
        load_example().create_receiver(
            brand.webhook_secret, f"{api_base}/api/v1", key, fulfilled.append, clock=clock
        )
    )
    receiver_base, receiver_server = serve(receiver)
    fulfilled.received = receiver.requests
    yield f"{receiver_base}/webhooks", fulfilled
    receiver_server.shutdown()
    api_server.shutdown()


def test_example_receiver_fulfils_a_payment_the_sender_delivers(brand, merchant):
    url, fulfilled = merchant
    payment = PaymentFactory(brand=brand, callback_url=url, reference="ORDER-88")
    complete_payment(payment)
    delivery_id = db.session.execute(db.select(WebhookDelivery.id)).scalar_one()

    assert deliver_webhook(delivery_id) == "sent"
    assert [(p["payment_id"], p["status"], p["reference"]) for p in fulfilled] == [
        (payment.public_id, "completed", "ORDER-88")
    ]


def test_example_receiver_rejects_bad_signatures_and_stale_timestamps(brand, merchant):
    url, fulfilled = merchant
    body = b'{"id":"evt_1","event":"payment.completed","created":"","data":{"payment_id":"x"}}'
    now = int(time.time())
    forged = requests.post(
        url,
        data=body,
        headers={
            "X-Service-Signature": sign_payload("whsec_wrong", body),
            "X-Service-Signature-V1": signature_v1(now, body, "whsec_wrong"),
            "X-Service-Timestamp": str(now),
        },
    )
    stale = requests.post(
        url,
        data=body,
        headers={
            "X-Service-Signature": sign_payload(brand.webhook_secret, body),
            "X-Service-Signature-V1": signature_v1(now - 301, body, brand.webhook_secret),
            "X-Service-Timestamp": str(now - 301),
        },
    )
    # The body-only signature alone, however fresh its timestamp header, is no longer enough.
    unversioned = requests.post(
        url,
        data=body,
        headers={
            "X-Service-Signature": sign_payload(brand.webhook_secret, body),
            "X-Service-Timestamp": str(now),
        },
    )
    assert (forged.status_code, stale.status_code, unversioned.status_code) == (401, 400, 401)
    assert fulfilled == []


def delivered_payment_completed(brand, url, reference):
    """Complete a payment whose webhook goes to `url` and deliver it; returns the payment."""
    payment = PaymentFactory(brand=brand, callback_url=url, reference=reference)
    complete_payment(payment)
    delivery_id = db.session.execute(db.select(WebhookDelivery.id)).scalar_one()
    assert deliver_webhook(delivery_id) == "sent"
    return payment


def test_a_captured_webhook_replayed_later_with_a_fresh_timestamp_is_refused(
    brand, merchant, clock
):
    url, fulfilled = merchant
    delivered_payment_completed(brand, url, "ORDER-90")
    [(headers, body)] = fulfilled.received
    assert headers["X-Service-Signature-V1"] == signature_v1(
        int(headers["X-Service-Timestamp"]), body, brand.webhook_secret
    )
    # An hour later an eavesdropper replays it, setting X-Service-Timestamp to the time of the
    # replay.
    clock.ahead = 3600
    replayed = {**headers, "X-Service-Timestamp": str(int(time.time()) + 3600)}
    first = requests.post(url, data=body, headers=replayed)
    # ... or rewrites t= in the versioned header too, which breaks its signature.
    _, signatures = headers["X-Service-Signature-V1"].split(",", 1)
    moved = {**replayed, "X-Service-Signature-V1": f"t={int(time.time()) + 3600},{signatures}"}
    second = requests.post(url, data=body, headers=moved)
    assert (first.status_code, second.status_code) == (400, 401)
    assert [p["reference"] for p in fulfilled] == ["ORDER-90"]


def test_a_captured_webhook_with_an_altered_body_is_refused(brand, merchant):
    url, fulfilled = merchant
    payment = delivered_payment_completed(brand, url, "ORDER-91")
    [(headers, body)] = fulfilled.received
    altered = body.replace(payment.public_id.encode(), b"00000000-0000-0000-0000-000000000000")
    assert altered != body
    refused = requests.post(url, data=altered, headers=headers)
    assert refused.status_code == 401
    assert [p["reference"] for p in fulfilled] == ["ORDER-91"]


def test_during_a_rotation_the_previous_secret_signs_a_second_v1(brand, app):
    body = b'{"id":"evt_2"}'
    header = signature_v1(1700000000, body, "whsec_new", "whsec_old")
    example = load_example()
    for secret in ("whsec_new", "whsec_old"):
        assert example.v1_is_valid(secret, body, header, now=1700000100) == "ok"
    assert example.v1_is_valid("whsec_other", body, header, now=1700000100) == ("invalid signature")
    assert example.v1_is_valid("whsec_old", body, header, now=1700000301) == "stale timestamp"


# The test vectors printed in docs/webhooks.md: a fixed secret, timestamp and body.
VECTOR_BODY = b'{"id":"evt_test","event":"webhook.test"}'
VECTOR_HEADER = "t=1700000000,v1=7c838d4e01d0c17fc1e1fe3a2cda4a8eb9ab42dd42ed8877ccb08fcd977cdd3e"
VECTOR_ROTATION = (
    VECTOR_HEADER + ",v1=5de639f7ac36d66a7fc26fd435e3841d105471e37496cdf733cc1087d5917a94"
)


def test_the_documented_test_vectors_are_what_the_sender_makes_and_the_example_accepts():
    docs = (ROOT / "docs" / "webhooks.md").read_text()
    assert VECTOR_BODY.decode() in docs and VECTOR_HEADER in docs and VECTOR_ROTATION in docs
    assert signature_v1(1700000000, VECTOR_BODY, "whsec_test_secret") == VECTOR_HEADER
    assert (
        signature_v1(1700000000, VECTOR_BODY, "whsec_test_secret", "whsec_old_secret")
        == VECTOR_ROTATION
    )
    example = load_example()
    assert example.v1_is_valid("whsec_test_secret", VECTOR_BODY, VECTOR_HEADER, 1700000000) == "ok"
    assert example.v1_is_valid("whsec_old_secret", VECTOR_BODY, VECTOR_ROTATION, 1700000000) == "ok"


def test_example_receiver_acknowledges_a_resent_webhook_but_fulfils_once(brand, merchant):
    url, fulfilled = merchant
    complete_payment(PaymentFactory(brand=brand, callback_url=url, reference="ORDER-89"))
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    assert deliver_webhook(delivery.id) == "sent"

    # What a worker killed after the answer but before recording it sends again: the same stored
    # body (so the same event id) and the same X-Service-Delivery, freshly signed.
    resend = post_webhook(
        Claim(
            delivery.id,
            delivery.event_id,
            delivery.created_at,
            2,
            None,
            delivery.url,
            delivery.payload,
            delivery.event,
            brand.webhook_secret,
        )
    )
    assert (resend.status, resend.body) == (200, "OK")
    assert [p["reference"] for p in fulfilled] == ["ORDER-89"]
