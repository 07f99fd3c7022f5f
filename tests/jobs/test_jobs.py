"""Background work: wake-ups after commit only, Redis outages survived, sweeps, periodic jobs,
commands.
"""

import logging
import socket
import threading
from datetime import timedelta

import pytest
from freezegun import freeze_time
from rq import Queue, get_current_job
from rq.registry import StartedJobRegistry

from gateway import jobs
from gateway.accounts.models.idempotency import IdempotencyRecord
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.jobs.in_process import InProcessExecutor
from gateway.jobs.rq_worker import GatewayWorker, enqueue_periodic
from gateway.outbox.sweep import sweep_outbox
from gateway.payments.lifecycle import complete_payment, create_payment
from gateway.payments.models.payment import Payment
from gateway.webhooks.events import emit_event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory
from tests.webhook_support import receiver, rq_redis  # noqa: F401,F811 - fixtures

CALLBACK = "https://merchant.example/hooks"


def webhook_jobs(redis):
    return Queue(jobs.WEBHOOKS, connection=redis).count


def test_without_redis_the_in_process_executor_delivers_after_commit(
    app, brand, receiver, monkeypatch
):
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    complete_payment(PaymentFactory(brand=brand, callback_url=receiver.url))

    assert receiver.wait_for(1)
    assert receiver.events()[0]["event"] == "payment.completed"
    assert wait_for_delivery_status("sent")


def test_first_request_of_a_serving_process_starts_the_periodic_sweep(
    app, client, brand, receiver, monkeypatch
):
    emit_event("webhook.test", brand, url=receiver.url)
    db.session.commit()  # jobs are off: nothing woke this delivery
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    client.get("/healthz")

    assert receiver.wait_for(1)
    assert receiver.events()[0]["event"] == "webhook.test"
    assert wait_for_delivery_status("sent")


RUNS = []  # what the jobs below were run with, in order
RELEASE = threading.Event()


def held_job(name):
    """A job that notes its run, then waits for the test to let it finish."""
    RUNS.append(name)
    RELEASE.wait(10)


def failing_job(name):
    """A job that notes its run, then fails."""
    RUNS.append(name)
    raise RuntimeError("the job failed")


@pytest.fixture
def executor(app, monkeypatch):
    """A started in-process executor of its own; its threads are let go and joined after the
    test."""
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    RUNS.clear()
    RELEASE.clear()
    executor = InProcessExecutor(app)
    yield executor
    RELEASE.set()
    if executor.pool is not None:
        executor.pool.shutdown(wait=True)


def wait_for_runs(count):
    pause = threading.Event()
    for _ in range(100):
        if len(RUNS) >= count:
            return True
        pause.wait(0.05)
    return False


def test_in_process_executor_drops_a_wakeup_whose_job_is_still_queued_or_running(executor):
    held = f"{__name__}.held_job"
    busy = [
        executor.enqueue(jobs.WEBHOOKS, held, (f"busy-{n}",), unique=f"busy:{n}") for n in range(4)
    ]
    assert wait_for_runs(4)  # every pool thread is taken: the next job waits in the queue
    queued = executor.enqueue(jobs.WEBHOOKS, held, ("due",), unique="delivery:evt_x:0")

    assert executor.enqueue(jobs.WEBHOOKS, held, ("due again",), unique="delivery:evt_x:0") is None
    assert executor.enqueue(jobs.WEBHOOKS, held, ("busy-0 again",), unique="busy:0") is None
    RELEASE.set()
    for job in (*busy, queued):
        job.result(10)
    assert sorted(RUNS) == ["busy-0", "busy-1", "busy-2", "busy-3", "due"]
    executor.enqueue(jobs.WEBHOOKS, held, ("due once done",), unique="delivery:evt_x:0").result(10)
    assert RUNS[-1] == "due once done"


def test_a_failed_in_process_job_frees_its_wakeup_key(executor, caplog):
    failing = f"{__name__}.failing_job"
    with caplog.at_level(logging.ERROR, logger="gateway.jobs.in_process"):
        executor.enqueue(jobs.SMS, failing, ("first",), unique="sms:1:0").result(10)
        executor.enqueue(jobs.SMS, failing, ("second",), unique="sms:1:0").result(10)

    assert RUNS == ["first", "second"]
    assert "the job failed" in caplog.text


def wait_for_delivery_status(status):
    """Poll the single delivery until a background thread has recorded `status`."""
    pause = threading.Event()
    for _ in range(50):
        db.session.expire_all()
        if db.session.execute(db.select(WebhookDelivery.status)).scalar_one() == status:
            return True
        pause.wait(0.1)
    return False


def test_wakeup_is_enqueued_only_when_the_transaction_commits(brand, rq_redis):
    emit_event("webhook.test", brand, url=CALLBACK)
    db.session.flush()
    assert webhook_jobs(rq_redis) == 0
    db.session.commit()
    assert webhook_jobs(rq_redis) == 1


def test_wakeup_of_a_rolled_back_transaction_is_forgotten(brand, rq_redis):
    emit_event("webhook.test", brand, url=CALLBACK)
    db.session.rollback()
    brand.name = "Renamed"
    db.session.commit()
    assert webhook_jobs(rq_redis) == 0
    assert db.session.execute(db.select(WebhookDelivery)).first() is None


def test_completion_commits_when_redis_is_unreachable_and_the_outage_is_logged_once(
    app, brand, closed_port, monkeypatch, caplog
):
    monkeypatch.setitem(app.config, "REDIS_URL", f"redis://127.0.0.1:{closed_port}/0")
    payments = [PaymentFactory(brand=brand, callback_url=CALLBACK) for _ in range(3)]
    with caplog.at_level(logging.WARNING):
        for payment in payments:
            complete_payment(payment)

    db.session.expire_all()
    assert [db.session.get(Payment, payment.id).status for payment in payments] == ["completed"] * 3
    assert db.session.execute(db.select(WebhookDelivery.status)).scalars().all() == ["pending"] * 3
    warnings = [
        record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING
    ]
    assert len(warnings) == 1, warnings
    assert "the sweep will pick them up" in warnings[0]


def test_sweep_enqueues_each_due_delivery_once_per_attempt(brand, rq_redis):
    due, leased, later = (emit_event("webhook.test", brand, url=CALLBACK) for _ in range(3))
    leased.lease_expires_at = utcnow() + timedelta(seconds=60)
    later.status, later.next_attempt_at = "pending", utcnow() + timedelta(minutes=5)
    db.session.commit()
    rq_redis.flushdb()  # Redis lost every wake-up: only the database remembers

    assert sweep_outbox() == 1
    assert sweep_outbox() == 1  # found again, but its wake-up is already on its way
    assert webhook_jobs(rq_redis) == 1
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).jobs[0].args == (jobs.DELIVER_WEBHOOK, due.id)


def test_expiry_job_expires_open_payments_after_the_payment_ttl(brand):
    payment = create_payment(brand, {"amount": 100, "currency": "BDT", "callback_url": CALLBACK})
    with freeze_time(utcnow() + timedelta(minutes=29)):
        jobs.run_job("gateway.payments.lifecycle.expire_due_payments")
        db.session.expire_all()
        assert db.session.get(Payment, payment.id).status == "created"
    with freeze_time(utcnow() + timedelta(minutes=31)):
        jobs.run_job("gateway.payments.lifecycle.expire_due_payments")
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "expired"
    assert db.session.execute(db.select(WebhookDelivery.event)).scalar_one() == "payment.expired"


def test_a_wakeup_left_in_redis_under_a_path_that_no_longer_exists_loses_no_webhook(
    brand, receiver, rq_redis
):
    # After an upgrade that moved job functions, a wake-up queued by the old code still names the
    # old entry point and job: it fails in the worker (kept in RQ's failed registry), and the
    # delivery, still due in the database, goes with the sweep's next wake-up (docs/deployment.md).
    delivery = emit_event("webhook.test", brand, url=receiver.url)
    db.session.commit()
    rq_redis.flushdb()  # the new code's own wake-up: only the old one is left
    Queue(jobs.WEBHOOKS, connection=rq_redis).enqueue(
        "gateway.rq_queues.run_rq_job", "gateway.services.webhooks.deliver_webhook", delivery.id
    )
    worker = GatewayWorker([jobs.WEBHOOKS], connection=rq_redis, stopping=threading.Event())
    worker.work(burst=True)
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).failed_job_registry.count == 1
    assert receiver.events() == []

    assert sweep_outbox() == 1
    GatewayWorker([jobs.WEBHOOKS], connection=rq_redis, stopping=threading.Event()).work(burst=True)
    assert [event["event"] for event in receiver.events()] == ["webhook.test"]
    assert wait_for_delivery_status("sent")


def note_worker_heartbeat():
    """A job that notes, while it runs, its worker's key's time to live and whether RQ's clean-up
    of abandoned jobs leaves it started."""
    job = get_current_job()
    redis = job.connection
    started = StartedJobRegistry(job.origin, connection=redis)
    started.cleanup()
    redis.set("test:worker-ttl", redis.ttl(f"rq:worker:{job.worker_name}"))
    redis.set("test:still-started", int(job.id in started.get_job_ids()))


def test_a_running_job_keeps_its_worker_alive_for_its_whole_timeout(rq_redis):
    # RQ's own heartbeat, as the worker runs it: a job is not taken for lost while it runs.
    job = Queue(jobs.MAINTENANCE, connection=rq_redis).enqueue(
        "tests.jobs.test_jobs.note_worker_heartbeat", job_timeout=jobs.JOB_TIMEOUT
    )
    GatewayWorker(
        [jobs.MAINTENANCE], connection=rq_redis, stopping=threading.Event(), worker_ttl=5
    ).work(burst=True)
    assert job.get_status(refresh=True) == "finished"
    assert int(rq_redis.get("test:worker-ttl")) >= jobs.JOB_TIMEOUT
    assert rq_redis.get("test:still-started") == b"1"


def test_prune_job_deletes_idempotency_records_older_than_a_day(brand):
    now = utcnow()
    for key, age in (("old", timedelta(hours=25)), ("fresh", timedelta(hours=23))):
        db.session.add(
            IdempotencyRecord(brand_id=brand.id, key=key, request_hash="x", created_at=now - age)
        )
    db.session.commit()
    jobs.run_job("gateway.accounts.idempotency.prune_idempotency_records")
    assert db.session.execute(db.select(IdempotencyRecord.key)).scalars().all() == ["fresh"]


def test_periodic_jobs_are_enqueued_once_per_interval_by_many_workers(app, rq_redis):
    stop = threading.Event()
    workers = [
        threading.Thread(target=enqueue_periodic, args=(app, rq_redis, stop)) for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    threading.Event().wait(1.5)
    stop.set()
    for worker in workers:
        worker.join()
    queued = Queue(jobs.MAINTENANCE, connection=rq_redis).jobs
    assert sorted(job.args[0] for job in queued) == sorted(path for _, path, _ in jobs.PERIODIC)


def test_worker_command_explains_that_it_needs_redis(runner):
    result = runner.invoke(args=["gateway", "worker"])
    assert result.exit_code != 0
    assert "REDIS_URL is not set" in result.output


def test_worker_command_refuses_unknown_queues(app, runner, monkeypatch):
    monkeypatch.setitem(app.config, "REDIS_URL", "redis://127.0.0.1:6379/4")
    result = runner.invoke(args=["gateway", "worker", "--queues", "webhooks,emails"])
    assert result.exit_code != 0
    assert "emails" in result.output


def test_sweep_command_runs_each_periodic_job_once(runner, brand):
    PaymentFactory(brand=brand, expires_at=utcnow() - timedelta(minutes=1))
    result = runner.invoke(args=["gateway", "sweep"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "sweep-outbox: 0",
        "expire-payments: 1",
        "prune-idempotency: 0",
        "prune-events: 0",
        "heal-matching: 0",
        "settle-chains: 0",
        "chain-gaps: 0",
        "prune-rate-limits: 0",
        "notifications: 0",
        "prune-notifications: 0",
        "prune-phone-notifications: 0",
        "invoice-overdue: 0",
        "rate-feeds: 0",
        "settle-wallets: 0",
    ]


def test_rotate_webhook_secret_prints_the_new_secret_last(runner, brand):
    old = brand.webhook_secret
    result = runner.invoke(args=["gateway", "rotate-webhook-secret"])
    assert result.exit_code == 0
    db.session.expire_all()
    assert result.output.splitlines()[-1] == brand.webhook_secret != old


@pytest.mark.parametrize("scheduled", [False, True])
def test_a_failed_enqueue_leaves_no_wakeup_key_behind(app, rq_redis, monkeypatch, scheduled):
    from redis.exceptions import ConnectionError as RedisConnectionError

    def refuse(*args, **kwargs):
        raise RedisConnectionError("Redis went away mid-enqueue")

    def wake():
        if scheduled:
            return jobs.enqueue_at(
                utcnow() + timedelta(minutes=1),
                jobs.WEBHOOKS,
                jobs.DELIVER_WEBHOOK,
                1,
                0,
                unique="delivery:evt_x:0",
            )
        return jobs.enqueue(jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, 1, unique="delivery:evt_x:0")

    method = "enqueue_at" if scheduled else "enqueue"
    with monkeypatch.context() as patch:
        patch.setattr(Queue, method, refuse)
        with pytest.raises(RedisConnectionError):
            wake()
    assert rq_redis.keys("gateway:wake*") == []
    assert wake() is not None  # the next wake-up of the same attempt is not suppressed
    assert wake() is None


def run_worker_serving(app, monkeypatch, names):
    """Whether `run_worker` for `names` (RQ's work loop stubbed) starts the periodic jobs."""
    from gateway.jobs import rq_worker

    started = threading.Event()

    def work(worker, **kwargs):
        started.wait(0.5)
        worker.stopping.set()  # as SIGTERM would

    monkeypatch.setattr(rq_worker, "enqueue_periodic", lambda app, redis, stop: started.set())
    monkeypatch.setattr(rq_worker.SimpleWorker, "work", work)
    rq_worker.run_worker(app, names)
    return started.is_set()


def test_only_a_worker_serving_maintenance_enqueues_the_periodic_jobs(app, rq_redis, monkeypatch):
    assert not run_worker_serving(app, monkeypatch, [jobs.WEBHOOKS])
    assert not run_worker_serving(app, monkeypatch, [jobs.WEBHOOKS, jobs.SMS])
    assert run_worker_serving(app, monkeypatch, [jobs.MAINTENANCE, jobs.WEBHOOKS])
