"""The outbound SMS queue: API, device leases and reports, the HTTP provider, backoff, receipts."""

import json
import threading
from datetime import timedelta

import pytest
from freezegun import freeze_time
from rq import Queue
from rq.registry import ScheduledJobRegistry
from werkzeug.wrappers import Response

from gateway import jobs
from gateway.accounts.api_keys import generate_key
from gateway.accounts.models.brand import Brand
from gateway.clock import utcnow
from gateway.domain_errors import DomainError
from gateway.extensions import db
from gateway.outbox.sweep import sweep_outbox
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.outbound import (
    DEVICE_LEASE,
    MAX_ATTEMPTS,
    OUTBOX,
    RETRY,
    lease_outbound_sms,
    queue_sms,
    report_outbound_sms,
)
from gateway.sms.provider import send_outbound_sms
from tests.factories import PaymentFactory, completed_payment, reload
from tests.webhook_support import TRICKLED_HEADS, drain_queues, rq_redis, timed, trickling  # noqa: F401,F811 - fixtures

PHONE = "+8801712345678"


def message(brand, body="Your code is 1234"):
    sms = queue_sms(brand, PHONE, body)
    db.session.commit()
    return sms


def test_queue_list_and_shape_through_the_api(client, auth):
    response = client.post(
        "/api/v1/sms/outbound", json={"to": "01712345678", "body": "Hello"}, headers=auth
    )
    assert response.status_code == 201
    data = response.get_json()["data"]
    assert list(data) == [
        "id",
        "to",
        "body",
        "status",
        "attempts",
        "last_error",
        "created_at",
        "sent_at",
        "livemode",
    ]
    assert (data["to"], data["status"], data["attempts"], data["livemode"]) == (
        PHONE,
        "queued",
        0,
        True,
    )
    listed = client.get("/api/v1/sms/outbound?status=queued", headers=auth).get_json()
    assert [item["id"] for item in listed["data"]] == [data["id"]]
    assert listed["meta"]["total"] == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({"to": "12", "body": "Hi"}, "to"),
        ({"to": PHONE, "body": ""}, "body"),
        ({"body": "Hi"}, "to"),
        ({"to": PHONE, "body": "x" * 1001}, "body"),
    ],
)
def test_bad_messages_are_refused_with_the_field(client, auth, body, field):
    response = client.post("/api/v1/sms/outbound", json=body, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] == field


def test_retry_is_only_for_failed_messages(client, auth, brand):
    sms = message(brand)
    response = client.post(f"/api/v1/sms/outbound/{sms.id}/retry", headers=auth)
    assert response.status_code == 409
    assert response.get_json()["code"] == "INVALID_STATE"
    sms.status = "failed"
    db.session.commit()
    response = client.post(f"/api/v1/sms/outbound/{sms.id}/retry", headers=auth)
    assert response.status_code == 200
    assert response.get_json()["data"]["status"] == "queued"


def test_another_brands_message_is_not_found(client, auth, other_brand):
    sms = message(other_brand)
    assert client.post(f"/api/v1/sms/outbound/{sms.id}/retry", headers=auth).status_code == 404
    assert client.get("/api/v1/sms/outbound", headers=auth).get_json()["data"] == []


def test_a_device_leases_a_message_once_and_reports_it_sent(brand):
    sms = message(brand)
    [leased] = lease_outbound_sms(brand, "device-1", limit=10)
    assert (leased.id, leased.shown_status, leased.attempts) == (sms.id, "leased", 1)
    assert lease_outbound_sms(brand, "device-2", limit=10) == []

    report_outbound_sms(brand, sms.id, "sent")
    sms = reload(sms)
    assert (sms.shown_status, sms.last_error) == ("sent", None)
    assert sms.sent_at is not None
    with pytest.raises(DomainError) as error:
        report_outbound_sms(brand, sms.id, "failed", "late")
    assert error.value.code == "INVALID_STATE"


def test_leases_respect_the_limit_and_the_brand(brand, other_brand):
    for _ in range(3):
        message(brand)
    message(other_brand)
    assert len(lease_outbound_sms(brand, "device-1", limit=2)) == 2
    assert len(lease_outbound_sms(brand, "device-1", limit=10)) == 1


def test_racing_devices_never_lease_the_same_message(app, brand):
    for _ in range(12):
        message(brand)
    start, leased = threading.Barrier(3), []

    def device(number):
        with app.app_context():
            own_brand = db.session.get(Brand, brand.id)
            start.wait()
            leased.extend(
                sms.id for sms in lease_outbound_sms(own_brand, f"device-{number}", limit=12)
            )

    threads = [threading.Thread(target=device, args=(number,)) for number in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(leased) == len(set(leased)) <= 12
    assert db.session.execute(db.select(db.func.sum(OutboundSms.attempts))).scalar_one() == len(
        leased
    )


def test_an_unreported_lease_returns_to_the_queue_after_five_minutes(brand):
    with freeze_time(utcnow()) as clock:
        sms = message(brand)
        lease_outbound_sms(brand, "device-1", limit=1)
        clock.tick(DEVICE_LEASE - timedelta(seconds=1))
        assert lease_outbound_sms(brand, "device-2", limit=1) == []
        clock.tick(timedelta(seconds=2))
        [again] = lease_outbound_sms(brand, "device-2", limit=1)
    assert (again.id, again.attempts) == (sms.id, 2)


def test_failures_back_off_then_stay_failed_after_five_attempts(brand):
    with freeze_time(utcnow()) as clock:
        sms = message(brand)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            [leased] = lease_outbound_sms(brand, "device-1", limit=1)
            assert leased.attempts == attempt
            report_outbound_sms(brand, sms.id, "failed", f"no signal {attempt}")
            if attempt < MAX_ATTEMPTS:
                clock.tick(RETRY.delays[attempt - 1] - timedelta(seconds=1))
                assert lease_outbound_sms(brand, "device-1", limit=1) == [], (
                    "leased before its backoff ended"
                )
                clock.tick(timedelta(seconds=1))
        clock.tick(timedelta(days=1))
        assert lease_outbound_sms(brand, "device-1", limit=1) == []
    sms = reload(sms)
    assert (sms.shown_status, sms.attempts, sms.last_error) == ("failed", 5, "no signal 5")


def test_report_status_must_be_sent_or_failed(brand):
    sms = message(brand)
    with pytest.raises(DomainError) as error:
        report_outbound_sms(brand, sms.id, "delivered")
    assert error.value.errors[0]["field"] == "status"


def test_the_provider_sends_queued_messages_through_rq(
    app, brand, httpserver, rq_redis, monkeypatch
):
    monkeypatch.setitem(app.config, "SMS_PROVIDER_URL", httpserver.url_for("/sms"))
    httpserver.expect_oneshot_request("/sms", method="POST").respond_with_data("busy", status=503)
    httpserver.expect_oneshot_request("/sms", method="POST").respond_with_json({"ok": True})
    with freeze_time(utcnow()) as clock:
        sms = message(brand)
        assert lease_outbound_sms(brand, "device-1", limit=5) == []  # the provider owns the queue
        drain_queues()
        assert (reload(sms).shown_status, reload(sms).last_error) == (
            "queued",
            "SMS provider answered 503: busy",
        )
        clock.tick(RETRY.delays[0] + timedelta(seconds=1))
        sweep_outbox()
        drain_queues()

    sms = reload(sms)
    assert (sms.shown_status, sms.attempts) == ("sent", 2)
    posted = json.loads(httpserver.log[-1][0].get_data())
    assert posted == {"id": sms.id, "to": PHONE, "body": "Your code is 1234"}


def test_provider_job_does_nothing_for_a_message_not_due(app, brand, httpserver, monkeypatch):
    monkeypatch.setitem(app.config, "SMS_PROVIDER_URL", httpserver.url_for("/sms"))
    sms = message(brand)
    sms.status = "sent"
    db.session.commit()
    assert send_outbound_sms(sms.id) is None
    assert httpserver.log == []


def test_each_due_message_is_woken_once_per_attempt(app, brand, rq_redis, monkeypatch):
    monkeypatch.setitem(app.config, "SMS_PROVIDER_URL", "https://sms.example/send")
    message(brand)  # woken once its transaction commits

    assert sweep_outbox() == 1
    assert sweep_outbox() == 1  # found again, but its wake-up is already on its way
    assert Queue(jobs.SMS, connection=rq_redis).count == 1


def test_a_provider_attempt_that_outlives_its_lease_records_nothing_and_schedules_nothing(
    app, brand, httpserver, rq_redis, monkeypatch
):
    monkeypatch.setitem(app.config, "SMS_PROVIDER_URL", httpserver.url_for("/sms"))
    with freeze_time(utcnow()) as clock:

        def slow_provider(request):
            # While the provider dawdles, the lease runs out and a sweep puts the message back in
            # the queue.
            clock.tick(OUTBOX.lease + timedelta(seconds=1))
            with app.app_context():
                sweep_outbox()
            return Response("busy", status=503)

        httpserver.expect_oneshot_request("/sms", method="POST").respond_with_handler(slow_provider)
        sms = message(brand)
        assert send_outbound_sms(sms.id) is None

    sms = reload(sms)
    assert (sms.shown_status, sms.attempts, sms.last_error) == ("queued", 1, OUTBOX.expired_error)
    assert (
        ScheduledJobRegistry(jobs.SMS, connection=rq_redis).count == 0
    )  # no retry of the lost attempt


@TRICKLED_HEADS
def test_a_provider_trickling_its_answer_is_cut_off_well_within_the_lease(
    app, brand, monkeypatch, trickling, head
):
    monkeypatch.setitem(app.config, "SMS_PROVIDER_URL", trickling(head).url)
    monkeypatch.setitem(app.config, "SMS_PROVIDER_TIMEOUT", 0.5)
    sms = message(brand)

    status, elapsed = timed(send_outbound_sms, sms.id)

    assert status == "pending" and elapsed < 2
    sms = reload(sms)
    assert (sms.shown_status, sms.attempts, sms.last_error) == (
        "queued",
        1,
        "SMS provider gave no answer within 0.5 s.",
    )


def test_receipt_sms_is_queued_on_completion_when_the_brand_wants_it(brand):
    completed_payment(brand=brand, customer_phone=PHONE)
    assert db.session.execute(db.select(OutboundSms)).first() is None
    brand.receipt_sms_enabled = True
    db.session.commit()
    payment = completed_payment(brand=brand, customer_phone=PHONE)
    PaymentFactory(brand=brand)  # an open payment sends nothing

    [receipt] = db.session.execute(db.select(OutboundSms)).scalars().all()
    assert (receipt.to_number, receipt.payment_id, receipt.shown_status) == (
        PHONE,
        payment.id,
        "queued",
    )
    assert payment.transaction.trx_id in receipt.body and "500.00 BDT" in receipt.body


def gw_test_key(brand):
    """Authorization header of a read+write test key (gw_test_…) of `brand`."""
    _, secret = generate_key(brand, "ci", ["read", "write"], livemode=False)
    return {"Authorization": f"Bearer {secret}"}


def failed_text(brand, body, livemode):
    sms = queue_sms(brand, PHONE, body, livemode=livemode)
    sms.status, sms.attempts, sms.last_error = "failed", MAX_ATTEMPTS, "No SIM in slot 1"
    db.session.commit()
    return sms


def test_a_test_key_lists_and_retries_only_test_texts(client, brand):
    live = failed_text(brand, "Live receipt", livemode=True)
    test = failed_text(brand, "Test text", livemode=False)
    headers = gw_test_key(brand)

    listed = client.get("/api/v1/sms/outbound", headers=headers).get_json()
    assert [(m["id"], m["livemode"]) for m in listed["data"]] == [(test.id, False)]
    assert listed["meta"]["total"] == 1

    before = (live.status, live.attempts, live.next_attempt_at, live.last_error)
    answer = client.post(f"/api/v1/sms/outbound/{live.id}/retry", headers=headers)
    assert (answer.status_code, answer.get_json()["code"]) == (404, "OUTBOUND_SMS_NOT_FOUND")
    live = reload(live)
    assert (live.status, live.attempts, live.next_attempt_at, live.last_error) == before

    answer = client.post(f"/api/v1/sms/outbound/{test.id}/retry", headers=headers)
    assert answer.status_code == 200 and answer.get_json()["data"]["status"] == "queued"


def test_a_live_key_never_sees_or_retries_a_text_a_test_key_queued(client, auth, brand):
    headers = gw_test_key(brand)
    queued = client.post(
        "/api/v1/sms/outbound", json={"to": "01712345678", "body": "Hello"}, headers=headers
    )
    assert queued.status_code == 201 and queued.get_json()["data"]["livemode"] is False
    text = db.session.get(OutboundSms, queued.get_json()["data"]["id"])
    assert text.livemode is False
    text.status = "failed"
    db.session.commit()

    assert client.get("/api/v1/sms/outbound", headers=auth).get_json()["data"] == []
    answer = client.post(f"/api/v1/sms/outbound/{text.id}/retry", headers=auth)
    assert (answer.status_code, answer.get_json()["code"]) == (404, "OUTBOUND_SMS_NOT_FOUND")
    assert reload(text).status == "failed"
    listed = client.get("/api/v1/sms/outbound", headers=headers).get_json()["data"]
    assert [m["id"] for m in listed] == [text.id]


def test_a_test_invoice_texted_to_its_customer_is_a_test_text(client, auth, brand):
    headers = gw_test_key(brand)
    body = {
        "customer": {"name": "Karim", "phone": "+8801711111111"},
        "items": [{"description": "Monthly plan", "quantity": "1", "unit_price": "400.00"}],
    }
    invoice = client.post("/api/v1/invoices", json=body, headers=headers).get_json()["data"]
    sent = client.post(
        f"/api/v1/invoices/{invoice['invoice_id']}/send",
        json={"channels": ["sms"]},
        headers=headers,
    )
    assert sent.status_code == 200, sent.get_json()

    text = db.session.execute(db.select(OutboundSms)).scalar_one()
    assert (text.to_number, text.livemode) == ("+8801711111111", False)
    assert invoice["number"] in text.body
    listed = client.get("/api/v1/sms/outbound", headers=headers).get_json()["data"]
    assert [m["id"] for m in listed] == [text.id]
    assert client.get("/api/v1/sms/outbound", headers=auth).get_json()["data"] == []
