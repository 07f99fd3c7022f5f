"""Telegram: the Bot API's sendMessage on a local stand-in, retries when it is down, errors without
the token.
"""

from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.notifications.catalogue import PAYMENT_COMPLETED
from gateway.notifications.outbox import RETRY
from tests.factories import completed_payment, reload
from tests.notifications.conftest import (
    BOT_TOKEN,
    CHAT_ID,
    SEND_PATH,
    configure,
    deliveries,
    send_due,
    sent_texts,
)


def test_a_completed_payment_reaches_the_telegram_chat(brand, telegram):
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})

    payment = completed_payment(brand=brand, reference="ORDER-77")
    assert sent_texts(telegram) == []  # nothing is sent on the payment's own path

    send_due()

    [(request, response)] = telegram.log
    assert request.path == SEND_PATH and request.method == "POST"
    body = request.get_json()
    assert body["chat_id"] == CHAT_ID
    assert "Payment ORDER-77 completed: 500.00 BDT" in body["text"]
    assert f"/panel/payments/{payment.public_id}" in body["text"]
    [delivery] = deliveries(brand)
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 1, None)


def test_a_receiver_that_is_down_never_blocks_the_payment_and_gets_it_later(
    app, brand, closed_port_base, httpserver, monkeypatch
):
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    start = utcnow()

    with freeze_time(start):
        payment = completed_payment(brand=brand, reference="ORDER-9")
        assert reload(payment).status == "completed"
        send_due()
    [delivery] = deliveries(brand)
    assert delivery.status == "pending" and delivery.attempts == 1
    assert "could not be reached" in delivery.last_error and BOT_TOKEN not in delivery.last_error
    assert delivery.next_attempt_at == start + timedelta(minutes=1)

    with freeze_time(start + timedelta(seconds=30)):
        assert send_due() == []  # not yet due

    httpserver.expect_request(SEND_PATH, method="POST").respond_with_json({"ok": True})
    monkeypatch.setitem(app.config, "TELEGRAM_API_BASE", httpserver.url_for("/").rstrip("/"))
    with freeze_time(start + timedelta(minutes=1, seconds=1)):
        assert send_due() == [delivery.id]

    delivery = reload(delivery)
    assert (delivery.status, delivery.attempts) == ("sent", 2)
    assert "Payment ORDER-9 completed" in sent_texts(httpserver)[0]["text"]


def test_a_refusing_bot_api_is_retried_with_backoff_then_failed_visibly(
    app, brand, httpserver, monkeypatch
):
    httpserver.expect_request(SEND_PATH, method="POST").respond_with_json(
        {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"}, status=400
    )
    monkeypatch.setitem(app.config, "TELEGRAM_API_BASE", httpserver.url_for("/").rstrip("/"))
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    start = utcnow()
    with freeze_time(start):
        completed_payment(brand=brand)
    at = start
    for number in range(1, RETRY.max_attempts + 1):
        with freeze_time(at):
            send_due()
        [delivery] = deliveries(brand)
        db.session.expire_all()
        assert delivery.attempts == number
        if number < RETRY.max_attempts:
            assert delivery.status == "pending" and delivery.next_attempt_at > at
            at = delivery.next_attempt_at
    assert delivery.status == "failed" and delivery.next_attempt_at is None
    assert delivery.last_error == "Telegram answered 400: Bad Request: chat not found"
    assert len(httpserver.log) == RETRY.max_attempts


def test_a_notification_that_cannot_be_written_never_fails_the_payment(
    brand, telegram, monkeypatch
):
    from gateway.notifications import outbox

    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    monkeypatch.setattr(outbox, "utcnow", lambda: "not a time")  # the INSERT fails at flush

    payment = completed_payment(brand=brand)

    assert reload(payment).status == "completed"
    assert reload(payment).transaction is not None
    assert deliveries(brand) == []  # only the notification was rolled back (to its SAVEPOINT)


def test_the_bot_token_never_reaches_the_logs_even_at_debug(brand, telegram, caplog):
    import logging

    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    completed_payment(brand=brand)
    with caplog.at_level(logging.DEBUG):
        send_due()
    assert len(telegram.log) == 1
    assert any("/bot…/sendMessage" in record.getMessage() for record in caplog.records)
    gateway_side = [r for r in caplog.records if r.name != "werkzeug"]  # werkzeug: the stand-in
    assert not [r for r in gateway_side if BOT_TOKEN in r.getMessage()]


def test_a_rate_limited_bot_waits_as_long_as_telegram_asks(app, brand, httpserver, monkeypatch):
    httpserver.expect_oneshot_request(SEND_PATH, method="POST").respond_with_json(
        {
            "ok": False,
            "error_code": 429,
            "description": "Too Many Requests: retry after 600",
            "parameters": {"retry_after": 600},
        },
        status=429,
    )
    httpserver.expect_request(SEND_PATH, method="POST").respond_with_json({"ok": True})
    monkeypatch.setitem(app.config, "TELEGRAM_API_BASE", httpserver.url_for("/").rstrip("/"))
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    start = utcnow()
    with freeze_time(start):
        completed_payment(brand=brand)
        send_due()
    [delivery] = deliveries(brand)
    assert delivery.next_attempt_at == start + timedelta(seconds=600)  # not the 1-minute backoff
    assert delivery.last_error == "Telegram answered 429: Too Many Requests: retry after 600"

    with freeze_time(start + timedelta(minutes=5)):
        assert send_due() == []
    with freeze_time(start + timedelta(minutes=10, seconds=1)):
        assert send_due() == [delivery.id]
    assert reload(delivery).status == "sent"
