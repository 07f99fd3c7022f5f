"""The real `flask gateway worker` through Redis faults: started before Redis, Redis restarted under
it, SIGKILLed, and a wake-up whose job died before claiming its delivery."""

import os
import signal
import threading
from datetime import timedelta

import pytest
from rq import Queue
from rq.registry import StartedJobRegistry

from gateway import jobs
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.outbox.kind import wake_key
from gateway.outbox.sweep import sweep_outbox
from gateway.payments.lifecycle import complete_payment
from gateway.webhooks.delivery import OUTBOX
from gateway.webhooks.events import emit_event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory
from tests.redis_server import RedisServer, own_redis  # noqa: F401 - fixture
from tests.webhook_support import receiver, rq_redis, start_worker  # noqa: F401,F811 - fixtures

pytestmark = pytest.mark.slow


def eventually(check, tries=200, pause=0.1):
    """Whether `check()` turns true within tries × pause seconds."""
    waiting = threading.Event()
    for _ in range(tries):
        if check():
            return True
        waiting.wait(pause)
    return False


def scheduler_pids(redis):
    """The process id each running RQ scheduler registered in Redis."""
    return [
        int(redis.hget(key, "pid"))
        for key in redis.keys("rq:scheduler:*")
        if redis.type(key) == b"hash"
    ]


def the_delivery():
    db.session.expire_all()
    return db.session.execute(db.select(WebhookDelivery)).scalar_one()


@pytest.fixture
def stopped_redis():
    """A RedisServer of the test's own that is not running yet; killed after the test if started."""
    server = RedisServer()
    yield server
    server.kill()


def test_worker_started_while_redis_is_down_waits_then_delivers(
    app, brand, receiver, start_worker, stopped_redis, monkeypatch
):
    worker = start_worker(REDIS_URL=stopped_redis.url)
    assert eventually(lambda: "is unreachable" in worker.output()), worker.output()
    threading.Event().wait(4)  # it used to exit within 3 s, tripping systemd's restart limit
    assert worker.process.poll() is None, worker.output()
    assert worker.output().count("is unreachable") == 1, (
        worker.output()
    )  # retried with backoff, logged once

    stopped_redis.start()
    monkeypatch.setitem(app.config, "REDIS_URL", stopped_redis.url)
    complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))
    assert receiver.wait_for(1), worker.output()
    assert eventually(lambda: the_delivery().status == "sent"), worker.output()
    assert "answers again" in worker.output()


def test_a_sigkilled_worker_leaves_no_scheduler_process_behind(start_worker, own_redis):
    worker = start_worker(REDIS_URL=own_redis.url)
    redis = own_redis.client()
    assert eventually(lambda: scheduler_pids(redis)), worker.output()
    assert scheduler_pids(redis) == [
        worker.process.pid
    ]  # the scheduler runs inside the worker's process

    os.kill(worker.process.pid, signal.SIGKILL)  # the worker alone, as the OOM killer would
    worker.process.wait(10)
    with pytest.raises(ProcessLookupError):  # nothing of its session is left running
        os.killpg(worker.process.pid, 0)


def test_scheduler_moves_a_retry_onto_its_queue_right_after_a_redis_outage(
    app, brand, receiver, start_worker, own_redis, monkeypatch
):
    # No maintenance queue, so no periodic sweep: only the scheduler can move the retry onto its
    # queue.
    worker = start_worker("--queues", jobs.WEBHOOKS, REDIS_URL=own_redis.url)
    assert eventually(lambda: scheduler_pids(own_redis.client())), worker.output()
    own_redis.kill()
    assert eventually(lambda: "is unreachable" in worker.output()), worker.output()
    own_redis.start()  # empty: the scheduler's locks and registration are gone

    delivery = emit_event("webhook.test", brand, url=receiver.url)
    db.session.commit()
    monkeypatch.setitem(app.config, "REDIS_URL", own_redis.url)
    jobs.enqueue_at(
        utcnow() + timedelta(seconds=1),
        jobs.WEBHOOKS,
        jobs.DELIVER_WEBHOOK,
        delivery.id,
        0,
        unique=wake_key(OUTBOX, delivery.id, delivery.created_at, 0),
    )
    # RQ's own scheduler, a forked child, died with the outage and was restarted after up to 10
    # minutes.
    assert receiver.wait_for(1, timeout=30), worker.output()
    assert eventually(lambda: the_delivery().status == "sent"), worker.output()


def test_a_wakeup_whose_job_died_before_claiming_is_sent_again_by_the_next_sweep(
    brand, receiver, start_worker, rq_redis
):
    complete_payment(
        PaymentFactory(brand=brand, callback_url=receiver.url)
    )  # the wake-up is queued
    delivery_id = the_delivery().id
    db.session.rollback()
    # Hold the row so the worker's claim waits: the job has started but not claimed when the worker
    # dies.
    holder = db.engine.connect()
    lock = holder.begin()
    holder.execute(
        db.update(WebhookDelivery)
        .where(WebhookDelivery.id == delivery_id)
        .values(updated_at=WebhookDelivery.updated_at)
    )
    try:
        first = start_worker("--queues", jobs.WEBHOOKS)
        started = StartedJobRegistry(jobs.WEBHOOKS, connection=rq_redis)
        assert eventually(lambda: started.get_job_ids()), first.output()
        threading.Event().wait(
            1
        )  # let it reach its claim, where it waits for the row (10 s on SQLite, or ever)
        first.kill()
    finally:
        lock.rollback()
        holder.close()

    queue = Queue(jobs.WEBHOOKS, connection=rq_redis)
    assert queue.count == 0
    assert sweep_outbox() == 1
    assert queue.count == 1  # not held back for WAKE_TTL by the dead job's wake-up key
    second = start_worker("--queues", jobs.WEBHOOKS)
    assert receiver.wait_for(1), second.output()
    assert eventually(lambda: the_delivery().status == "sent"), second.output()


def test_a_worker_killed_mid_delivery_does_not_hold_up_its_hosts_other_webhooks(
    brand, receiver, start_worker
):
    receiver.hold = threading.Event()  # the first webhook is held open: its worker dies sending it
    # The production lease: the dead attempt's own delivery waits it out, not its host's others.
    first = start_worker("--queues", jobs.WEBHOOKS, WEBHOOK_LEASE_SECONDS="60")
    complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))
    assert receiver.wait_for(1), first.output()
    first.kill()
    receiver.hold.set()

    second = start_worker(WEBHOOK_LEASE_SECONDS="60")
    for _ in range(5):
        complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))
    # A host never heard from gets one attempt at a time: the dead attempt's place held it (and
    # parked these five) until its 60 s lease ran out.
    assert receiver.wait_for(6, timeout=30), second.output()
    delivered = {item["headers"]["X-Service-Delivery"] for item in receiver.received[1:]}
    assert len(delivered) == 5
