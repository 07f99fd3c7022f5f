"""Idempotency-Key: replays, reuse with another body, a repeat in flight, per-brand keys, 5xx and
expiry.
"""

import threading
from datetime import datetime, timedelta, timezone

import pytest
import requests
from freezegun import freeze_time

from gateway.accounts.idempotency import prune_idempotency_records
from gateway.accounts.models.idempotency import IdempotencyRecord
from gateway.extensions import db
from gateway.payments import lifecycle as payment_service
from gateway.payments.models.payment import Payment
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

    response = client.post(
        "/api/v1/customers", json={"email": "a@example.com"}, headers=keyed(auth, "k-2")
    )

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
        response = client.post(
            URL, json={**BODY, "amount": "1.00"}, headers=keyed(auth, "reused-tomorrow")
        )

    assert response.status_code == 201


def test_pruning_deletes_only_records_past_the_window(client, auth):
    with freeze_time("2030-06-01 09:00:00") as frozen:
        client.post(URL, json=BODY, headers=keyed(auth, "old"))
        frozen.tick(timedelta(hours=20))
        client.post(URL, json=BODY, headers=keyed(auth, "young"))
        frozen.tick(timedelta(hours=5))

        assert prune_idempotency_records() == 1

    assert db.session.execute(db.select(IdempotencyRecord.key)).scalars().all() == ["young"]


@pytest.mark.parametrize(
    "key, status", [("k" * 255, 201), ("k" * 256, 422), ("", 422), ("k" * 5000, 422)]
)
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


def test_a_repeat_while_the_first_is_running_is_409_in_progress(live_server, auth, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    original = payment_service.create_payment

    def held(brand, data, **mode):
        entered.set()
        release.wait(10)
        return original(brand, data, **mode)

    monkeypatch.setattr(payment_service, "create_payment", held)
    headers = keyed(auth, "in-flight")
    answers = {}
    first = threading.Thread(
        target=lambda: answers.setdefault(
            "first", requests.post(live_server + URL, json=BODY, headers=headers, timeout=20)
        )
    )
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


# --- refused requests release their key; abandoned reservations are taken over after a lease ----


@pytest.mark.parametrize(
    "send, status",
    [
        (dict(json={**BODY, "amount": "-1"}), 422),
        (dict(data="{not json", content_type="application/json"), 400),
        (dict(data="amount=1", content_type="application/x-www-form-urlencoded"), 415),
        (dict(data=b"x" * (1024 * 1024 + 1), content_type="application/json"), 413),
    ],
)
def test_a_refused_request_writes_no_record_and_the_key_takes_a_corrected_body(
    client, auth, send, status
):
    refused = client.post(URL, headers=keyed(auth, "fix-and-retry"), **send)
    assert refused.status_code == status
    assert count(IdempotencyRecord) == 0

    corrected = client.post(URL, json=BODY, headers=keyed(auth, "fix-and-retry"))
    again = client.post(URL, json=BODY, headers=keyed(auth, "fix-and-retry"))

    assert corrected.status_code == 201
    assert "Idempotent-Replayed" not in corrected.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert count(Payment) == 1
    assert count(IdempotencyRecord) == 1


def test_a_refused_request_does_not_block_the_key_with_key_reused(client, auth):
    client.post(URL, json={**BODY, "amount": "-1"}, headers=keyed(auth, "typo"))

    response = client.post(URL, json={**BODY, "amount": "5.00"}, headers=keyed(auth, "typo"))

    assert response.status_code == 201
    assert response.json.get("code") != "IDEMPOTENCY_KEY_REUSED"


def abandoned(brand, key, when, body=BODY):
    """An in-progress record left behind by a request that died before answering; its id."""
    with app_request(brand, body):
        from gateway.api.idempotency import request_fingerprint

        fingerprint = request_fingerprint()
    record = IdempotencyRecord(
        brand_id=brand.id, key=key, request_hash=fingerprint, created_at=when
    )
    db.session.add(record)
    db.session.commit()
    return record.id


def app_request(brand, body=BODY):
    """A request context of a POST to the payments URL, acting for `brand`."""
    from flask import current_app, g

    context = current_app.test_request_context(URL, method="POST", json=body)

    class Acting:
        def __enter__(self):
            context.push()
            g.brand, g.brand_id = brand, brand.id  # what authenticate leaves for the views
            return context

        def __exit__(self, *exc):
            context.pop()

    return Acting()


def test_an_in_progress_record_is_409_within_its_lease_and_taken_over_after_it(
    app, client, auth, brand
):
    start = datetime(2030, 6, 1, 9, 0, tzinfo=timezone.utc)
    lease = app.config["IDEMPOTENCY_LEASE_SECONDS"]
    assert (
        lease == 5
    )  # a few seconds: a phone or a shop retrying after a crash is not kept waiting a minute
    abandoned(brand, "died-mid-request", start)

    with freeze_time(start) as frozen:
        frozen.move_to(start + timedelta(seconds=lease - 1))
        during = client.post(URL, json=BODY, headers=keyed(auth, "died-mid-request"))

        frozen.move_to(start + timedelta(seconds=lease + 1))
        taken_over = client.post(URL, json=BODY, headers=keyed(auth, "died-mid-request"))
        replayed = client.post(URL, json=BODY, headers=keyed(auth, "died-mid-request"))

    assert (during.status_code, during.json["code"]) == (409, "IDEMPOTENCY_IN_PROGRESS")
    assert taken_over.status_code == 201
    assert "Idempotent-Replayed" not in taken_over.headers
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert replayed.json == taken_over.json
    assert count(Payment) == 1
    record = db.session.execute(db.select(IdempotencyRecord)).scalar_one()
    assert (record.response_status, record.created_at) == (
        201,
        start + timedelta(seconds=lease + 1),
    )


def test_a_finished_record_is_never_taken_over_by_the_lease(client, auth):
    with freeze_time("2030-06-01 09:00:00") as frozen:
        first = client.post(URL, json=BODY, headers=keyed(auth, "finished"))
        frozen.tick(timedelta(hours=2))
        again = client.post(URL, json=BODY, headers=keyed(auth, "finished"))

    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json
    assert count(Payment) == 1


def test_taking_over_an_abandoned_record_is_race_safe(brand):
    from gateway.api.idempotency import release_if_stale, reserve

    start = datetime(2030, 6, 1, 9, 0, tzinfo=timezone.utc)
    abandoned(brand, "contested", start)
    seen = db.session.execute(
        db.select(
            IdempotencyRecord.id, IdempotencyRecord.created_at, IdempotencyRecord.response_status
        )
    ).one()

    with freeze_time(start + timedelta(seconds=90)), app_request(brand):
        winner = reserve("contested", "f" * 64)
        # A second request that read the same abandoned record before the winner took it over.
        assert release_if_stale(seen, start + timedelta(seconds=90)) == 0
        db.session.commit()
        loser = reserve("contested", "f" * 64)

    assert winner is not None and loser is None
    record = db.session.execute(db.select(IdempotencyRecord)).scalar_one()
    assert (record.id, record.created_at, record.response_status) == (winner[0], winner[1], None)


def test_a_late_answer_of_the_abandoned_request_does_not_overwrite_the_new_reservation(brand):
    from flask import g

    from gateway.api.idempotency import current_response, reserve, store_response

    start = datetime(2030, 6, 1, 9, 0, tzinfo=timezone.utc)
    old_id = abandoned(brand, "slow-first", start)

    with freeze_time(start + timedelta(seconds=90)), app_request(brand):
        winner = reserve("slow-first", "f" * 64)
        # The first request was slow, not dead, and answers now: with a success and with a failure.
        for status in (201, 422):
            g.idempotency_reservation = (old_id, start)
            store_response(current_response('{"late": true}', status))

    record = db.session.execute(db.select(IdempotencyRecord)).scalar_one()
    assert (record.id, record.created_at) == winner
    assert (record.response_status, record.response_body) == (None, None)


# --- one key, concurrent requests; a request outlived by its lease never commits beside the retry
# ----------


def post_at_once(url, headers, bodies):
    """POST every body at the same moment from its own thread; the responses."""
    from concurrent.futures import ThreadPoolExecutor

    start = threading.Barrier(len(bodies))

    def post(body):
        start.wait()
        return requests.post(url, json=body, headers=headers, timeout=30)

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(post, bodies))


def test_concurrent_payment_requests_with_one_key_make_one_payment(live_server, auth):
    answers = post_at_once(live_server + URL, keyed(auth, "same-moment"), [BODY] * 6)

    created = [a for a in answers if a.status_code == 201]
    assert created and all(a.status_code in (201, 409) for a in answers)
    assert all(
        a.json()["code"] == "IDEMPOTENCY_IN_PROGRESS" for a in answers if a.status_code == 409
    )
    assert {a.json()["data"]["payment_id"] for a in created} == {
        db.session.execute(db.select(Payment.public_id)).scalar_one()
    }


def test_concurrent_refund_requests_with_one_key_refund_once(live_server, auth, brand):
    from decimal import Decimal

    from gateway.payments.models.payment import Refund
    from tests.factories import completed_payment

    payment = completed_payment(brand=brand, amount=Decimal("50.00"))
    body = {"trx_id": payment.transaction.trx_id, "amount": "10.00"}

    answers = post_at_once(live_server + "/api/v1/refunds", keyed(auth, "refund-once"), [body] * 6)

    assert all(a.status_code in (201, 409) for a in answers)
    assert any(a.status_code == 201 for a in answers)
    assert count(Refund) == 1
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).amount_refunded == Decimal("10.00")


def test_a_request_whose_key_was_taken_over_rolls_its_payment_back(
    app, live_server, auth, monkeypatch
):
    monkeypatch.setitem(
        app.config, "IDEMPOTENCY_LEASE_SECONDS", 0
    )  # every in-progress key is up for takeover
    entered, release = threading.Event(), threading.Event()
    original = payment_service.create_payment
    calls = []

    def slow_first(brand, data, **mode):
        calls.append(data)
        if len(calls) == 1:  # the first request is alive but slow, beyond its lease
            entered.set()
            release.wait(10)
        return original(brand, data, **mode)

    monkeypatch.setattr(payment_service, "create_payment", slow_first)
    headers = keyed(auth, "outlived")
    answers = {}
    first = threading.Thread(
        target=lambda: answers.setdefault(
            "first", requests.post(live_server + URL, json=BODY, headers=headers, timeout=20)
        )
    )
    first.start()
    try:
        assert entered.wait(10), "the first request never reached the service"
        retry = requests.post(live_server + URL, json=BODY, headers=headers, timeout=20)
    finally:
        release.set()
        first.join(20)

    assert retry.status_code == 201
    assert (answers["first"].status_code, answers["first"].json()["code"]) == (
        409,
        "IDEMPOTENCY_IN_PROGRESS",
    )
    assert db.session.execute(db.select(Payment.public_id)).scalars().all() == [
        retry.json()["data"]["payment_id"]
    ]
    record = db.session.execute(db.select(IdempotencyRecord)).scalar_one()
    assert record.response_status == 201
