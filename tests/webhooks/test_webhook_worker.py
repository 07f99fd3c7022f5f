"""The real `flask gateway worker`: webhooks arrive, and survive Redis outages and killed
workers."""

import socket
import threading

import pytest
from rq import Queue

from gateway import jobs
from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.delivery import ABANDONED
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import PaymentFactory
from tests.webhook_support import receiver, rq_redis, start_worker  # noqa: F401,F811 - fixtures

pytestmark = pytest.mark.slow


def the_delivery():
    db.session.expire_all()
    return db.session.execute(db.select(WebhookDelivery)).scalar_one()


def wait_for_status(status, tries=100):
    """Poll the delivery row until it reaches `status` (the worker writes it after answering)."""
    event = threading.Event()
    for _ in range(tries):
        if the_delivery().status == status:
            return True
        event.wait(0.1)
    return False


def test_worker_delivers_a_completed_payment_with_the_spec_body(brand, receiver, start_worker):
    worker = start_worker()
    payment = PaymentFactory(brand=brand, callback_url=receiver.url, reference="ORDER-1")
    transaction = complete_payment(payment, provider="bkash", provider_trx_id="BK9")

    assert receiver.wait_for(1), worker.output()
    body = receiver.events()[0]
    assert body["event"] == "payment.completed"
    assert body["data"]["payment_id"] == payment.public_id
    assert body["data"]["trx_id"] == transaction.trx_id
    assert (body["data"]["amount"], body["data"]["currency"], body["data"]["status"]) == (
        "500.00",
        "BDT",
        "completed",
    )
    assert wait_for_status("sent"), worker.output()


def test_webhook_arrives_after_the_sweep_when_redis_was_down_at_completion(
    app, brand, receiver, start_worker, closed_port, monkeypatch
):
    payment = PaymentFactory(brand=brand, callback_url=receiver.url)
    monkeypatch.setitem(app.config, "REDIS_URL", f"redis://127.0.0.1:{closed_port}/0")
    complete_payment(payment)  # commits; the wake-up cannot be enqueued and is only logged
    assert the_delivery().status == "pending"

    worker = start_worker()  # Redis is back: the worker's periodic sweep finds the due row
    assert receiver.wait_for(1), worker.output()
    assert receiver.events()[0]["data"]["payment_id"] == payment.public_id
    assert wait_for_status("sent"), worker.output()


def test_delivery_completes_after_its_worker_is_killed_mid_request(brand, receiver, start_worker):
    receiver.hold = threading.Event()
    first = start_worker()
    complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))
    assert receiver.wait_for(1), first.output()  # the worker is inside the request now
    first.kill()
    receiver.hold.set()

    second = start_worker()  # its sweep takes the row over once the dead worker's lease expires
    assert receiver.wait_for(2), second.output()
    assert wait_for_status("sent"), second.output()
    delivery = the_delivery()
    log = db.session.execute(db.select(WebhookAttempt).order_by(WebhookAttempt.id)).scalars().all()
    assert delivery.attempts == 2
    assert [(a.error, a.response_status) for a in log] == [(ABANDONED, None), (None, 200)]
    assert receiver.received[0]["raw"] == receiver.received[1]["raw"]
    # The resend is the same webhook to the receiver: one event id, one X-Service-Delivery.
    assert {hit["json"]["id"] for hit in receiver.received} == {delivery.event_id}
    assert {hit["headers"]["X-Service-Delivery"] for hit in receiver.received} == {str(delivery.id)}


def first_to_exit(workers, timeout=30):
    """The first of the worker processes to exit, or None if all still run after `timeout` s."""
    pause = threading.Event()
    for _ in range(int(timeout / 0.05)):
        for worker in workers:
            if worker.process.poll() is not None:
                return worker
        pause.wait(0.05)
    return None


def test_two_workers_running_the_same_delivery_at_once_send_it_once(
    brand, receiver, start_worker, rq_redis
):
    receiver.hold = threading.Event()
    complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))  # one wake-up
    jobs.enqueue(
        jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, the_delivery().id
    )  # and a second, for the same attempt
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).count == 2
    workers = [
        start_worker(
            "--burst",
            "--queues",
            jobs.WEBHOOKS,
            "--log-level",
            "WARNING",
            WEBHOOK_LEASE_SECONDS="60",
        )
        for _ in range(2)
    ]

    assert receiver.wait_for(1), (
        workers[0].output() + workers[1].output()
    )  # one worker is inside the request
    # The other runs the second job meanwhile, loses the claim and, the queue empty, quits.
    done = first_to_exit(workers)
    assert done is not None and done.process.returncode == 0, done and done.output()
    [held] = [worker for worker in workers if worker is not done]
    assert held.process.poll() is None, held.output()
    receiver.hold.set()
    assert held.process.wait(20) == 0, held.output()

    assert len(receiver.received) == 1
    delivery = the_delivery()
    assert (delivery.status, delivery.attempts) == ("sent", 1)
