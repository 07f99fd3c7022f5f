"""GET /webhooks/deliveries, POST /webhooks/deliveries/{id}/retry, POST /webhooks/tests, callback
URL checks.
"""

import json
import socket
from datetime import timedelta

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.events import emit_event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import completed_payment
from tests.webhook_support import receiver  # noqa: F401,F811 - fixture

SPEC_FIELDS = [
    "id",
    "transaction_id",
    "event",
    "url",
    "payload",
    "response_status",
    "response_body",
    "attempts",
    "status",
    "created_at",
]


def record_tests(brand, count, url="https://merchant.example/hooks"):
    """`count` webhook.test deliveries for a brand, one second apart, oldest first."""
    start = utcnow() - timedelta(hours=1)
    for number in range(count):
        delivery = emit_event("webhook.test", brand, url=url)
        delivery.created_at = start + timedelta(seconds=number)
    db.session.commit()


def test_listing_shows_exactly_the_spec_fields_with_the_payload_as_a_string(
    client, auth, brand, receiver
):
    payment = completed_payment(brand=brand, callback_url=receiver.url)
    deliver_webhook(db.session.execute(db.select(WebhookDelivery.id)).scalar_one())

    response = client.get("/api/v1/webhooks/deliveries", headers=auth)
    assert response.status_code == 200
    [record] = response.get_json()["data"]
    assert list(record) == SPEC_FIELDS
    assert isinstance(record["payload"], str)
    assert json.loads(record["payload"])["data"]["payment_id"] == payment.public_id
    assert record["transaction_id"] == payment.transaction.id
    assert (record["event"], record["status"], record["attempts"]) == (
        "payment.completed",
        "success",
        1,
    )
    assert (record["response_status"], record["response_body"], record["url"]) == (
        200,
        "OK",
        receiver.url,
    )


def test_listing_is_the_50_newest_of_the_calling_brand_only(client, auth, brand, other_brand):
    record_tests(brand, 55)
    record_tests(other_brand, 3, url="https://other.example/hooks")

    data = client.get("/api/v1/webhooks/deliveries", headers=auth).get_json()["data"]
    own = (
        db.session.execute(
            db.select(WebhookDelivery.id)
            .where(WebhookDelivery.brand_id == brand.id)
            .order_by(WebhookDelivery.created_at.desc())
        )
        .scalars()
        .all()
    )
    assert [record["id"] for record in data] == own[:50]
    assert all(record["url"] == "https://merchant.example/hooks" for record in data)


def test_another_brands_delivery_reads_as_not_found(client, auth, other_brand):
    record_tests(other_brand, 1)
    delivery_id = db.session.execute(db.select(WebhookDelivery.id)).scalar_one()
    for response in (
        client.get(f"/api/v1/webhooks/deliveries/{delivery_id}", headers=auth),
        client.post(f"/api/v1/webhooks/deliveries/{delivery_id}/retry", headers=auth),
    ):
        assert response.status_code == 404
        assert response.get_json()["code"] == "WEBHOOK_DELIVERY_NOT_FOUND"


def test_retry_redelivers_a_failed_delivery_now(client, auth, brand, receiver):
    completed_payment(brand=brand, callback_url=receiver.url)
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    delivery.status, delivery.attempts, delivery.next_attempt_at = "failed", 8, None
    db.session.commit()

    response = client.post(f"/api/v1/webhooks/deliveries/{delivery.id}/retry", headers=auth)
    assert response.status_code == 202
    assert response.get_json()["data"]["status"] == "retrying"
    assert deliver_webhook(delivery.id) == "sent"
    assert len(receiver.received) == 1

    detail = client.get(f"/api/v1/webhooks/deliveries/{delivery.id}", headers=auth).get_json()[
        "data"
    ]
    assert (detail["status"], detail["attempts"]) == ("success", 9)
    assert [attempt["response_status"] for attempt in detail["attempt_log"]] == [200]


def test_retry_of_a_delivery_in_flight_is_a_conflict(client, auth, brand):
    record_tests(brand, 1)
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    delivery.lease_expires_at = utcnow() + timedelta(seconds=30)
    db.session.commit()
    response = client.post(f"/api/v1/webhooks/deliveries/{delivery.id}/retry", headers=auth)
    assert response.status_code == 409
    assert response.get_json()["code"] == "INVALID_STATE"


def test_test_event_is_signed_and_sent_to_the_given_url(client, auth, brand, receiver):
    response = client.post("/api/v1/webhooks/tests", json={"url": receiver.url}, headers=auth)
    assert response.status_code == 201
    record = response.get_json()["data"]
    assert (record["event"], record["status"], record["transaction_id"]) == (
        "webhook.test",
        "pending",
        None,
    )
    deliver_webhook(record["id"])
    assert receiver.events()[0]["event"] == "webhook.test"
    assert receiver.received[0]["headers"]["X-Service-Event"] == "webhook.test"


def test_test_event_without_any_url_names_the_field(client, auth):
    response = client.post("/api/v1/webhooks/tests", json={}, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == "url"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hooks",
        "http://localhost:8000/hooks",
        "http://10.1.2.3/hooks",
        "http://192.168.1.5/hooks",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hooks",
        "http://[::ffff:10.0.0.1]/hooks",
        "http://0.0.0.0/hooks",
        "http://100.64.0.1/hooks",
        # IPv6 forms that carry a private IPv4 address: NAT64, its local-use prefix, 6to4,
        # IPv4-compatible, IPv4-translated (SIIT) and Teredo.
        "http://[64:ff9b::10.0.0.1]/hooks",
        "http://[64:ff9b:1::8.8.8.8]/hooks",
        "http://[2002:a9fe:a9fe::1]/hooks",
        "http://[::127.0.0.1]/hooks",
        "http://[::ffff:0:192.168.1.5]/hooks",
        "http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/hooks",
        # Private by their names, refused without DNS: delivery would refuse them.
        "http://localhost./hooks",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://127.0.0.1.nip.io/hooks",
    ],
)
def test_private_callback_urls_are_refused_when_not_allowed(app, client, auth, monkeypatch, url):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    response = client.post(
        "/api/v1/payments",
        json={"amount": "10.00", "currency": "BDT", "callback_url": url},
        headers=auth,
    )
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == "callback_url"
    test_response = client.post("/api/v1/webhooks/tests", json={"url": url}, headers=auth)
    assert test_response.status_code == 422
    assert test_response.get_json()["errors"][0]["field"] == "url"


def test_public_callback_urls_are_accepted_when_private_ones_are_refused(
    app, client, auth, monkeypatch
):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda *args, **kwargs: [(2, 1, 6, "", ("93.184.215.14", 443))]
    )
    response = client.post(
        "/api/v1/payments",
        json={
            "amount": "10.00",
            "currency": "BDT",
            "callback_url": "https://shop.example.com/hooks",
        },
        headers=auth,
    )
    assert response.status_code == 201


def test_private_callback_urls_are_accepted_when_allowed(client, auth):
    response = client.post(
        "/api/v1/payments",
        json={"amount": "10.00", "currency": "BDT", "callback_url": "http://127.0.0.1:9000/hooks"},
        headers=auth,
    )
    assert response.status_code == 201


def test_reads_need_the_read_scope_and_retries_the_write_scope(client, brand, make_key):
    write_only = make_key(brand, scopes=("write",))
    read_only = make_key(brand, scopes=("read",))
    assert client.get("/api/v1/webhooks/deliveries", headers=write_only).status_code == 403
    assert (
        client.post(
            "/api/v1/webhooks/tests", json={"url": "https://x.example/h"}, headers=read_only
        ).status_code
        == 403
    )


def test_openapi_documents_the_webhook_and_sms_operations(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    for path in (
        "/api/v1/webhooks/deliveries",
        "/api/v1/webhooks/deliveries/{delivery_id}/retry",
        "/api/v1/webhooks/tests",
        "/api/v1/sms/outbound",
        "/api/v1/sms/outbound/{message_id}/retry",
    ):
        assert path in paths
