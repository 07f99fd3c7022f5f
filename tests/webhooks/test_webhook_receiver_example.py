"""examples/webhook_receiver.py against the real sender and the real API over HTTP."""

import importlib.util
import threading
import time

import pytest
import requests
from werkzeug.serving import make_server

from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.delivery import Claim, deliver_webhook, post_webhook, sign_payload
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


@pytest.fixture
def merchant(app, brand, make_key):
    """The example receiver, reading payments back through the gateway's API served over HTTP."""
    api_base, api_server = serve(app)
    fulfilled = []
    key = make_key(brand, ("read",))["Authorization"].removeprefix("Bearer ")
    receiver = load_example().create_receiver(
        brand.webhook_secret, f"{api_base}/api/v1", key, fulfilled.append
    )
    receiver_base, receiver_server = serve(receiver)
    yield f"{receiver_base}/webhooks", fulfilled
    receiver_server.shutdown()
    api_server.shutdown()


def test_example_receiver_fulfils_a_payment_the_sender_delivers(brand, merchant):
    url, fulfilled = merchant
    payment = PaymentFactory(brand=brand, callback_url=url, reference="ORDER-88")
    complete_payment(payment)
    delivery_id = db.session.execute(db.select(WebhookDelivery.id)).scalar_one()

    assert deliver_webhook(delivery_id) == "success"
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
            "X-Service-Timestamp": str(now),
        },
    )
    stale = requests.post(
        url,
        data=body,
        headers={
            "X-Service-Signature": sign_payload(brand.webhook_secret, body),
            "X-Service-Timestamp": str(now - 301),
        },
    )
    assert (forged.status_code, stale.status_code) == (401, 400)
    assert fulfilled == []


def test_example_receiver_acknowledges_a_resent_webhook_but_fulfils_once(brand, merchant):
    url, fulfilled = merchant
    complete_payment(PaymentFactory(brand=brand, callback_url=url, reference="ORDER-89"))
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    assert deliver_webhook(delivery.id) == "success"

    # What a worker killed after the answer but before recording it sends again: the same stored body
    # (so the same event id) and the same X-Service-Delivery, freshly signed.
    resend = post_webhook(
        Claim(
            delivery.id,
            delivery.event_id,
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
