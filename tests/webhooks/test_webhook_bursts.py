"""A burst of completed payments: each delivery a job of its own, delivered oldest first; a second
worker delivers while the first is held by a slow receiver; a worker killed mid-burst loses
nothing."""

import threading

import pytest
from rq import Queue

from gateway import jobs
from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.delivery import ABANDONED
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import PaymentFactory
from tests.webhook_support import (  # noqa: F401,F811 - fixtures
    WebhookReceiver,
    drain_queues,
    receiver,
    rq_redis,
    start_worker,
)


def complete(brand, url, count):
    """Complete `count` payments whose webhooks go to `url`; their public ids, in order."""
    payments = [PaymentFactory(brand=brand, callback_url=url) for _ in range(count)]
    for payment in payments:
        complete_payment(payment)
    return [payment.public_id for payment in payments]


def arrived(receiver):
    return [event["data"]["payment_id"] for event in receiver.events()]


def deliveries():
    db.session.expire_all()
    return db.session.execute(db.select(WebhookDelivery).order_by(WebhookDelivery.id)).scalars()


# Generous: each worker is a process of its own, slow to start on a loaded machine (CI runs five
# passes side by side on two cores).
PATIENCE = 60


def eventually(check, timeout=PATIENCE):
    pause = threading.Event()
    for _ in range(int(timeout / 0.1)):
        if check():
            return True
        pause.wait(0.1)
    return False


@pytest.fixture
def held(brand):
    """A second receiver that keeps every request waiting until the test lets it go."""
    receiver = WebhookReceiver(brand.webhook_secret)
    receiver.hold = threading.Event()
    yield receiver
    receiver.close()
    assert receiver.rejected == []


def test_a_burst_of_completions_is_delivered_oldest_first(brand, receiver, rq_redis):
    paid = complete(brand, receiver.url, 6)
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).count == 6

    drain_queues()

    assert arrived(receiver) == paid
    assert [(d.status, d.attempts) for d in deliveries()] == [("sent", 1)] * 6


@pytest.mark.slow
def test_a_second_worker_delivers_a_burst_while_the_first_is_held(
    brand, receiver, held, rq_redis, start_worker
):
    [slow] = complete(brand, held.url, 1)
    paid = complete(brand, receiver.url, 10)
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).count == 11
    first = start_worker("--queues", jobs.WEBHOOKS)
    # The first worker is inside the held delivery.
    assert held.wait_for(1, PATIENCE), first.output()

    second = start_worker("--queues", jobs.WEBHOOKS)  # the ten that wait
    assert receiver.wait_for(10, PATIENCE), second.output()
    assert sorted(arrived(receiver)) == sorted(paid)
    assert arrived(held) == [slow]  # still held: the burst did not wait for it
    held.hold.set()
    # The held attempt ends: answered once let go, or cut at WEBHOOK_TIMEOUT first on a loaded
    # machine (then retried later); either way recorded, never lost.
    assert eventually(
        lambda: (
            [d.log_status for d in deliveries() if d.url == held.url] in (["success"], ["retrying"])
        )
    ), first.output()
    # The receiver counts a request when it arrives; the worker records it sent after the answer.
    assert eventually(
        lambda: all(d.status == "sent" for d in deliveries() if d.url == receiver.url)
    ), second.output()


@pytest.mark.slow
def test_a_worker_killed_mid_burst_loses_no_delivery(brand, receiver, held, rq_redis, start_worker):
    paid = complete(brand, receiver.url, 2)
    [slow] = complete(brand, held.url, 1)
    paid += complete(brand, receiver.url, 3)
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).count == 6
    first = start_worker("--queues", jobs.WEBHOOKS)
    # Two delivered, the third held, three waiting.
    assert held.wait_for(1, PATIENCE), first.output()
    assert arrived(receiver) == paid[:2]
    first.kill()
    held.hold.set()

    second = start_worker()  # the waiting three from the queue; the abandoned one from the sweep
    assert receiver.wait_for(5, PATIENCE), second.output()
    assert arrived(receiver) == paid
    assert eventually(lambda: all(d.status == "sent" for d in deliveries())), second.output()
    [killed] = [d for d in deliveries() if d.url == held.url]
    attempts = db.session.execute(
        db.select(WebhookAttempt.error).where(WebhookAttempt.delivery_id == killed.id)
    ).scalars()
    assert (killed.attempts, list(attempts)) == (2, [ABANDONED, None])
    assert arrived(held) == [slow, slow]  # at least once: the killed attempt's webhook came again
