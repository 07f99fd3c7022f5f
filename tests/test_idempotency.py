"""Idempotency-Key: replays, reuse with another body, a repeat in flight, per-brand keys, 5xx and expiry."""
import threading
from datetime import datetime, timedelta, timezone

import pytest
import requests
from freezegun import freeze_time
from werkzeug.serving import make_server

from gateway.api.idempotency import prune_idempotency_records
from gateway.extensions import db
from gateway.models import IdempotencyRecord, Payment
from gateway.services import payments as payment_service
from tests.factories import PaymentFactory

URL = "/api/v1/payments"
BODY = {"amount": "500.00", "currency": "BDT", "reference": "ORDER-7"}


def count(model):
    db.session.expire_all()
    return db.session.scalar(db.select(db.func.count()).select_from(model))


def keyed(auth, key):
    return {**auth, "Idempotency-Key": key}


def test_a_repeat_replays_the_stored_answer_and_creates_nothing(client, auth):
    first = client.post(URL, json=BODY, headers=keyed(auth, "order-7-attempt"))
    again = client.post(URL, json=BODY, headers=keyed(auth, "order-7-attempt"))

    assert first.status_code == again.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json
    assert again.headers["Content-Type"] == "application/json"
    assert count(Payment) == 1


def test_without_a_key_every_post_creates(client, auth):
    client.post(URL, json=BODY, headers=auth)
    client.post(URL, json=BODY, headers=auth)

    assert count(Payment) == 2


def test_the_same_key_with_another_body_is_422_key_reused(client, auth):
    client.post(URL, json=BODY, headers=keyed(auth, "k-1"))

    response = client.post(URL, json={**BODY, "amount": "501.00"}, headers=keyed(auth, "k-1"))

    assert (response.status_code, response.json["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")
    assert "Idempotent-Replayed" not in response.headers
    assert count(Payment) == 1


def test_the_same_key_on_another_endpoint_is_422_key_reused(client, auth):
    client.post(URL, json=BODY, headers=keyed(auth, "k-2"))

    response = client.post("/api/v1/customers", json={"email": "a@example.com"}, headers=keyed(auth, "k-2"))

    assert (response.status_code, response.json["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")


def test_a_replayed_cancel_answers_200_again_instead_of_409(client, auth, brand):
    payment = PaymentFactory(brand=brand)
    path = f"{URL}/{payment.public_id}/cancel"

    first = client.post(path, headers=keyed(auth, "cancel-1"))
    again = client.post(path, headers=keyed(auth, "cancel-1"))
    unkeyed = client.post(path, headers=auth)

    assert (first.status_code, again.status_code, unkeyed.status_code) == (200, 200, 409)
    assert again.headers["Idempotent-Replayed"] == "true"


def test_keys_are_per_brand(client, auth, other_brand, make_key):
    theirs = make_key(other_brand)
    other_body = {**BODY, "amount": "9.00"}

    mine = client.post(URL, json=BODY, headers=keyed(auth, "shared-key"))
    their = client.post(URL, json=other_body, headers=keyed(theirs, "shared-key"))

    assert mine.status_code == their.status_code == 201
    assert "Idempotent-Replayed" not in their.headers
    assert mine.json["data"]["payment_id"] != their.json["data"]["payment_id"]
    assert count(Payment) == 2


def test_a_server_error_is_not_stored_so_a_retry_runs_again(client, auth, monkeypatch):
    def broken(brand, data):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(payment_service, "create_payment", broken)
    failed = client.post(URL, json=BODY, headers=keyed(auth, "retry-me"))
    assert (failed.status_code, failed.json["code"]) == (500, "INTERNAL_ERROR")
    assert "database on fire" not in failed.get_data(as_text=True)
    assert count(IdempotencyRecord) == 0

    monkeypatch.undo()
    retried = client.post(URL, json=BODY, headers=keyed(auth, "retry-me"))

    assert retried.status_code == 201
    assert "Idempotent-Replayed" not in retried.headers
    assert count(Payment) == 1


def test_records_replay_for_24_hours_and_not_after(client, auth):
    start = datetime(2030, 6, 1, 9, 0, tzinfo=timezone.utc)
    with freeze_time(start) as frozen:
        first = client.post(URL, json=BODY, headers=keyed(auth, "daily"))

        frozen.move_to(start + timedelta(hours=23, minutes=59))
        replayed = client.post(URL, json=BODY, headers=keyed(auth, "daily"))
        assert replayed.headers.get("Idempotent-Replayed") == "true"
        assert replayed.json == first.json

        frozen.move_to(start + timedelta(hours=24, seconds=1))
        fresh = client.post(URL, json=BODY, headers=keyed(auth, "daily"))

    assert fresh.status_code == 201
    assert "Idempotent-Replayed" not in fresh.headers
    assert fresh.json["data"]["payment_id"] != first.json["data"]["payment_id"]
    assert count(Payment) == 2
    assert count(IdempotencyRecord) == 1


def test_an_expired_key_may_carry_a_different_body(client, auth):
    with freeze_time("2030-06-01 09:00:00") as frozen:
        client.post(URL, json=BODY, headers=keyed(auth, "reused-tomorrow"))
        frozen.tick(timedelta(days=2))
        response = client.post(URL, json={**BODY, "amount": "1.00"}, headers=keyed(auth, "reused-tomorrow"))

    assert response.status_code == 201


def test_pruning_deletes_only_records_past_the_window(client, auth):
    with freeze_time("2030-06-01 09:00:00") as frozen:
        client.post(URL, json=BODY, headers=keyed(auth, "old"))
        frozen.tick(timedelta(hours=20))
        client.post(URL, json=BODY, headers=keyed(auth, "young"))
        frozen.tick(timedelta(hours=5))

        assert prune_idempotency_records() == 1

    assert db.session.execute(db.select(IdempotencyRecord.key)).scalars().all() == ["young"]


@pytest.mark.parametrize("key, status", [("k" * 255, 201), ("k" * 256, 422), ("", 422), ("k" * 5000, 422)])
def test_keys_are_1_to_255_characters(client, auth, key, status):
    response = client.post(URL, json=BODY, headers=keyed(auth, key))

    assert response.status_code == status
    if status == 422:
        assert response.json["code"] == "VALIDATION_ERROR"
        assert response.json["errors"][0]["field"] == "Idempotency-Key"
        assert count(Payment) == 0


def test_a_key_on_a_read_is_ignored(client, auth):
    response = client.get(URL, headers=keyed(auth, "get-key"))

    assert response.status_code == 200
    assert count(IdempotencyRecord) == 0


@pytest.fixture
def live_server(app):
    """The app on a real threaded HTTP server on a free local port; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_a_repeat_while_the_first_is_running_is_409_in_progress(live_server, auth, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    original = payment_service.create_payment

    def held(brand, data):
        entered.set()
        release.wait(10)
        return original(brand, data)

    monkeypatch.setattr(payment_service, "create_payment", held)
    headers = keyed(auth, "in-flight")
    answers = {}
    first = threading.Thread(target=lambda: answers.setdefault(
        "first", requests.post(live_server + URL, json=BODY, headers=headers, timeout=20)))
    first.start()
    try:
        assert entered.wait(10), "the first request never reached the service"
        during = requests.post(live_server + URL, json=BODY, headers=headers, timeout=20)
    finally:
        release.set()
        first.join(20)
    after = requests.post(live_server + URL, json=BODY, headers=headers, timeout=20)

    assert (during.status_code, during.json()["code"]) == (409, "IDEMPOTENCY_IN_PROGRESS")
    assert answers["first"].status_code == 201
    assert after.status_code == 201 and after.headers["Idempotent-Replayed"] == "true"
    assert after.json() == answers["first"].json()
    assert count(Payment) == 1
