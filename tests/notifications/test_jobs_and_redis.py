"""Notifications ride the real job machinery: an RQ worker sends them, and a Redis outage loses
none.
"""

from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.notifications.catalogue import PAYMENT_COMPLETED
from gateway.outbox.sweep import sweep_outbox
from tests.factories import completed_payment, reload
from tests.local_servers import free_port
from tests.notifications.conftest import configure, deliveries, sent_texts
from tests.webhook_support import drain_queues, rq_redis  # noqa: F401 - fixture


def test_an_rq_worker_sends_the_notification_woken_after_commit(brand, telegram, rq_redis):
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    completed_payment(brand=brand, reference="ORDER-RQ")
    assert rq_redis.keys("rq:queue:*")  # the wake-up went to Redis, not to the request

    drain_queues()

    [body] = sent_texts(telegram)
    assert body["text"].startswith("Payment ORDER-RQ completed")
    assert [d.status for d in deliveries(brand)] == ["sent"]


def test_with_redis_down_the_payment_completes_and_the_sweep_sends_it_later(
    app, brand, telegram, rq_redis, monkeypatch
):
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    redis_url = app.config["REDIS_URL"]
    monkeypatch.setitem(app.config, "REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    start = utcnow()
    with freeze_time(start):
        payment = completed_payment(brand=brand, reference="ORDER-DOWN")
    assert reload(payment).status == "completed"
    [delivery] = deliveries(brand)
    assert (delivery.status, delivery.attempts) == ("pending", 0)  # kept in the outbox
    assert sent_texts(telegram) == []

    monkeypatch.setitem(app.config, "REDIS_URL", redis_url)  # Redis is back, empty of that wake-up
    assert not rq_redis.keys("rq:queue:*")
    with freeze_time(start + timedelta(seconds=15)):
        sweep_outbox()
        drain_queues()

    [body] = sent_texts(telegram)
    assert body["text"].startswith("Payment ORDER-DOWN completed")
    assert [(d.status, d.attempts) for d in deliveries(brand)] == [("sent", 1)]
