"""Faults injected for real into a production-like stack (gunicorn, RQ workers, PostgreSQL, a Redis
of our own): nothing answers 5xx beyond a request that was itself killed, no payment is stuck, no
webhook is lost, and a webhook arrives twice only as documented (the same event id and
X-Service-Delivery)."""

import threading
from collections import defaultdict

import psycopg

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.faults.harness import WEB_APP_NAME, wait_until
from tests.services import POSTGRES_URL
from tests.webhook_support import WebhookReceiver

SETTLE = 45  # seconds a fault may take to play out once injected (the sweep runs every second)


def references(prefix, count):
    return [f"{prefix}-{index}" for index in range(count)]


def payment_rows(payment_ids):
    db.session.expire_all()
    return (
        db.session.execute(db.select(Payment).where(Payment.public_id.in_(payment_ids)))
        .scalars()
        .all()
    )


def deliveries():
    db.session.expire_all()
    return (
        db.session.execute(
            db.select(WebhookDelivery).where(WebhookDelivery.event == "payment.completed")
        )
        .scalars()
        .all()
    )


def delivered_ids(receiver):
    return {
        hit["json"]["data"]["payment_id"]
        for hit in list(receiver.received)
        if hit["json"]["event"] == "payment.completed"
    }


def assert_nothing_lost(payment_ids, receiver, workers, exactly_once=True):
    """Every payment completed, every webhook delivered and recorded, repeats only of the same
    webhook.
    """
    everything = set(payment_ids)
    arrived = wait_until(
        lambda: (
            delivered_ids(receiver) >= everything
            and all(row.status == "sent" for row in deliveries())
        ),
        SETTLE,
    )
    stuck = sorted(row.status for row in payment_rows(payment_ids) if row.status != "completed")
    assert stuck == [], f"payments stuck: {stuck}"
    assert arrived, (
        f"{len(everything - delivered_ids(receiver))} webhooks missing; "
        f"{sorted((d.status, d.attempts) for d in deliveries())[:10]}\n{workers.output()}"
    )
    assert sorted(row.status for row in payment_rows(payment_ids)) == ["completed"] * len(
        payment_ids
    )
    rows = deliveries()
    assert sorted(row.status for row in rows) == ["sent"] * len(payment_ids)
    assert {row.event_id for row in rows} == {
        hit["json"]["id"]
        for hit in receiver.received
        if hit["json"]["event"] == "payment.completed"
    }
    by_event = defaultdict(list)
    for hit in list(receiver.received):
        by_event[hit["json"]["id"]].append(hit)
    for event_id, hits in by_event.items():
        assert len({hit["raw"] for hit in hits}) == 1, f"{event_id} arrived with different bodies"
        assert len({hit["headers"]["X-Service-Delivery"] for hit in hits}) == 1, (
            f"{event_id}: two delivery ids"
        )
    repeats = sum(len(hits) - 1 for hits in by_event.values())
    if exactly_once:
        assert repeats == 0, f"{repeats} webhooks arrived twice with no fault that explains it"
    return repeats


def test_redis_stopped_and_restarted_empty_while_payments_complete(
    shop, receiver, workers, redis_server
):
    workers.start(2)
    paid = shop.pay_many(references("before", 3))
    redis_server.kill()
    try:
        paid += shop.pay_many(references("outage", 6))
    finally:
        redis_server.start()  # empty: every wake-up it held is gone
    paid += shop.pay_many(references("after", 3))

    assert shop.server_errors() == []
    assert_nothing_lost(paid, receiver, workers)


def test_a_worker_killed_mid_delivery_leaves_the_delivery_to_another(shop, receiver, workers):
    receiver.hold = threading.Event()
    [first] = workers.start(1)
    paid = [shop.pay("held-0")]
    assert receiver.wait_for(1), workers.output()  # the only worker is inside the request now
    workers.start(1)
    workers.kill(first)  # after the receiver has the webhook, before the answer is recorded
    receiver.hold.set()
    paid += shop.pay_many(references("after-kill", 6))

    assert shop.server_errors() == []
    repeats = assert_nothing_lost(paid, receiver, workers, exactly_once=False)
    assert (
        1 <= repeats <= workers.killed
    )  # the killed attempt's webhook came again, and nothing else did
    [held] = payment_rows(paid[:1])
    [killed_row] = [row for row in deliveries() if row.payment_id == held.id]
    assert killed_row.attempts == 2  # the abandoned attempt, then another worker's


def terminate_web_backends():
    """pg_terminate_backend on every gunicorn connection that is running a query or inside a
    transaction.
    """
    dsn = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as connection:
        return connection.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = %s AND state IN ('active', 'idle in transaction') "
            "AND pid <> pg_backend_pid()",
            (WEB_APP_NAME,),
        ).fetchone()[0]


def test_connections_terminated_mid_request_fail_only_their_own_request(shop, receiver, workers):
    workers.start(2)
    killed, stop = [], threading.Event()

    def terminator():
        while not stop.wait(0.25):
            killed.append(terminate_web_backends())

    thread = threading.Thread(target=terminator, daemon=True)
    thread.start()
    try:
        paid = shop.pay_many(references("terminated", 12), threads=4)
    finally:
        stop.set()
        thread.join(5)

    assert sum(killed) > 0, "no request was caught mid-flight: the fault was not injected"
    assert len(shop.server_errors()) <= sum(killed), shop.server_errors()
    references_made = [row.reference for row in db.session.execute(db.select(Payment)).scalars()]
    assert sorted(references_made) == sorted(references("terminated", 12)), (
        "a retried request made a second payment"
    )
    assert_nothing_lost(paid, receiver, workers)


def test_a_receiver_down_then_up_gets_every_webhook(shop, brand, workers, receiver):
    receiver.close()  # the receiver goes down: its port refuses connections
    port = receiver.port
    workers.start(2)
    paid = shop.pay_many(references("down", 6))
    assert wait_until(
        lambda: (
            all(row.attempts >= 1 and row.log_status == "retrying" for row in deliveries())
            and len(deliveries()) == 6
        ),
        SETTLE,
    ), workers.output()

    back = WebhookReceiver(brand.webhook_secret, port=port)  # up again on the same address
    try:
        assert shop.server_errors() == []
        assert_nothing_lost(paid, back, workers)
        assert back.rejected == []
    finally:
        back.close()
