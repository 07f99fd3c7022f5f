"""Batched wake-ups on RQ: a burst shares a few jobs that run every wake-up once, oldest first;
none is stranded by a budget, a failure or a failed enqueue."""

import threading

import pytest
from rq import Queue
from rq.registry import FailedJobRegistry, FinishedJobRegistry

from gateway import jobs
from gateway.jobs import rq_queues
from gateway.jobs.in_process import InProcessExecutor
from gateway.jobs.rq_worker import GatewayWorker
from tests.webhook_support import rq_redis  # noqa: F401 - fixture

RUNS = []  # what the job below was run with, in order


def noted_job(name):
    """A job that notes its run; one whose name starts with "fail" then fails."""
    RUNS.append(name)
    if name.startswith("fail"):
        raise RuntimeError("the job failed")


NOTED = f"{__name__}.noted_job"


@pytest.fixture(autouse=True)
def no_runs():
    RUNS.clear()


def wake(name, unique=None):
    return jobs.enqueue(jobs.WEBHOOKS, NOTED, name, unique=unique or f"test:{name}", batch=True)


def work(redis):
    """A real RQ worker (the gateway's) in this process until the webhooks queue is empty."""
    queue = Queue(jobs.WEBHOOKS, connection=redis)
    GatewayWorker([queue], connection=redis, stopping=threading.Event()).work(
        burst=True, logging_level="WARNING"
    )


def jobs_run(redis):
    return FinishedJobRegistry(jobs.WEBHOOKS, connection=redis).count + (
        FailedJobRegistry(jobs.WEBHOOKS, connection=redis).count
    )


def test_a_burst_of_batched_wakeups_shares_one_job_that_runs_them_all_oldest_first(app, rq_redis):
    for n in range(5):
        wake(f"w{n}")
    # The first wake-up's job, and a helper queued as the second joined it: not five jobs.
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).count == 2

    work(rq_redis)

    assert RUNS == ["w0", "w1", "w2", "w3", "w4"]
    # The job ran them all; its helper, and the one it queued as it started, found none left.
    assert jobs_run(rq_redis) == 3
    assert rq_redis.keys("gateway:wake*") == [] and rq_redis.keys("gateway:batch*") == []


def test_a_wakeup_already_waiting_in_a_batch_is_not_added_twice(app, rq_redis):
    wake("first")
    wake("second")
    assert wake("second again", unique="test:second") is None

    work(rq_redis)

    assert RUNS == ["first", "second"]


def test_a_batch_ends_at_its_budget_and_its_helper_runs_the_rest(app, rq_redis, monkeypatch):
    monkeypatch.setattr(rq_queues, "BATCH_SIZE", 3)
    for n in range(8):
        wake(f"w{n}")

    work(rq_redis)

    assert RUNS == [f"w{n}" for n in range(8)]
    assert jobs_run(rq_redis) == 4  # 3 + 3 + 2, and the last helper found none left


def test_a_wakeup_failing_mid_batch_fails_its_job_and_leaves_the_rest_to_the_helper(app, rq_redis):
    for name in ("w0", "fail-w1", "w2", "w3"):
        wake(name)

    work(rq_redis)

    assert RUNS == ["w0", "fail-w1", "w2", "w3"]
    assert FailedJobRegistry(jobs.WEBHOOKS, connection=rq_redis).count == 1
    assert rq_redis.keys("gateway:batch*") == []


def test_a_wakeup_that_comes_while_the_batch_runs_gets_a_job_of_its_own(app, rq_redis):
    wake("w0")
    queue = Queue(jobs.WEBHOOKS, connection=rq_redis)
    [job] = queue.jobs
    rq_queues.WakeBatch(rq_redis, jobs.WEBHOOKS, NOTED, jobs.WAKE_TTL).start(job.meta["wake"], True)
    wake("w1")  # the queued job has started: w1 cannot count on it any more
    assert queue.count == 2


def test_a_failed_enqueue_of_a_batch_job_leaves_no_key_behind(app, rq_redis, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    def refuse(*args, **kwargs):
        raise RedisConnectionError("Redis went away mid-enqueue")

    with monkeypatch.context() as patch:
        patch.setattr(Queue, "enqueue", refuse)
        with pytest.raises(RedisConnectionError):
            wake("w0")
    assert rq_redis.keys("gateway:*") == []
    assert wake("w0") is not None  # the next wake-up gets its job: nothing suppresses it
    assert wake("w1") is None  # and the one after joins its batch
    assert Queue(jobs.WEBHOOKS, connection=rq_redis).count == 2  # w0's job and a helper


def test_without_redis_a_batched_wakeup_is_a_job_of_its_own(app, monkeypatch):
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    executor = InProcessExecutor(app)
    try:
        futures = [
            executor.enqueue(jobs.WEBHOOKS, NOTED, (f"w{n}",), f"test:{n}", batch=True)
            for n in range(3)
        ]
        for future in futures:
            future.result(10)
    finally:
        executor.pool.shutdown(wait=True)
    assert sorted(RUNS) == ["w0", "w1", "w2"]
