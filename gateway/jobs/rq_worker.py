"""`flask gateway worker`: RQ's worker, its scheduler in a thread, the periodic jobs; all outlive a
Redis outage.
"""

import logging
import signal
import threading

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker
from rq.scheduler import RQScheduler

from . import MAINTENANCE, PERIODIC, interval
from .redis_health import outage_for
from .rq_queues import ENTRY, JOB_OPTIONS

log = logging.getLogger(__name__)

FIRST_RETRY, LAST_RETRY = (
    0.5,
    30,
)  # seconds between tries to reach Redis: doubled after each, up to the last
SCHEDULER_INTERVAL = 1  # seconds between the scheduler's looks for due retries


class GatewayWorker(SimpleWorker):
    """RQ's SimpleWorker (no fork per job) that tells run_worker a shutdown was asked for, not Redis
    lost.
    """

    # RQ's backoff between tries to reach a lost Redis grows to a minute by default: jobs would wait
    # that long after Redis is back.
    max_connection_wait_time = 5.0

    def __init__(self, *args, stopping, **kwargs):
        super().__init__(*args, **kwargs)
        self.stopping = stopping

    def request_stop(self, signum, frame):
        """SIGTERM/SIGINT: finish the current job, then quit for good."""
        self.stopping.set()
        super().request_stop(signum, frame)


def run_worker(app, queue_names, burst=False, log_level="INFO"):
    """Serve the queues, with the scheduler and (serving `maintenance`) the periodic jobs, until
    told to stop.

    Redis unreachable at the start or later is waited for with backoff, logged once, never a reason
    to exit: systemd would restart an exiting worker until its restart limit gave up on it.
    """
    url = app.config["REDIS_URL"]
    redis = Redis.from_url(url)
    queues = [Queue(name, connection=redis) for name in queue_names]
    stopping = threading.Event()
    stop_on_signals(stopping)
    if not wait_for_redis(url, stopping):
        return False
    if burst:
        enqueue_due_retries(queue_names, redis, log_level)
        return GatewayWorker(queues, connection=redis, stopping=stopping).work(
            burst=True, logging_level=log_level
        )
    threads = [
        threading.Thread(
            target=run_scheduler,
            args=(queue_names, url, stopping, log_level),
            name="gateway-scheduler",
            daemon=True,
        )
    ]
    # Periodic jobs go onto the maintenance queue: only a worker serving it schedules them, so a
    # `--queues webhooks` worker adds no sweeps that it would leave to others.
    if MAINTENANCE in queue_names:
        threads.append(
            threading.Thread(
                target=enqueue_periodic,
                args=(app, redis, stopping),
                name="gateway-periodic",
                daemon=True,
            )
        )
    for thread in threads:
        thread.start()
    try:
        while not stopping.is_set():
            serve_until_redis_fails(queues, redis, url, stopping, log_level)
            stop_on_signals(stopping)  # RQ's handlers belong to the worker that just ended
            stopping.wait(
                FIRST_RETRY
            )  # a work loop that ended at once is not restarted in a tight loop
            wait_for_redis(url, stopping)
    finally:
        stopping.set()
        for thread in threads:
            thread.join(5)
    return True


def serve_until_redis_fails(queues, redis, url, stopping, log_level):
    """One RQ worker's work loop: it ends on a shutdown request, or when Redis fails under it."""
    worker = GatewayWorker(queues, connection=redis, stopping=stopping)
    try:
        worker.work(logging_level=log_level)
    except RedisError as error:  # from RQ's start-up or teardown, which it does not retry itself
        outage_for(url).failed(error)


def stop_on_signals(stopping):
    """SIGTERM/SIGINT outside RQ's work loop (waiting for Redis) stop the worker at once."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())


def wait_for_redis(url, stopping):
    """Block until Redis answers, retrying with backoff; whether it does (False: told to stop
    first).
    """
    outage, delay = outage_for(url), FIRST_RETRY
    while not stopping.is_set():
        try:
            outage.client.ping()
        except RedisError as error:
            outage.failed(error)  # the first failure of an outage is logged, the rest are not
            stopping.wait(delay)
            delay = min(delay * 2, LAST_RETRY)
            continue
        outage.succeeded()
        return True
    return False


def run_scheduler(queue_names, url, stopping, log_level="INFO"):
    """RQ's scheduler, in a thread of the worker rather than a forked child: it dies with the worker
    (even SIGKILLed) and, retrying through a Redis outage, moves due retries onto their queues as
    soon as Redis is back.
    """
    scheduler = RQScheduler(
        queue_names,
        connection=Redis.from_url(url),
        interval=SCHEDULER_INTERVAL,
        logging_level=log_level,
    )
    outage, wanted, born = outage_for(url), set(queue_names), False
    while not stopping.is_set():
        try:
            if scheduler.acquired_locks != wanted:
                # Each pass, not every few minutes: a lock freed by a dead worker or an emptied
                # Redis is taken now.
                scheduler.acquire_locks()
            if not born:
                scheduler.register_birth()
                born = True
            scheduler.heartbeat()
            if scheduler.acquired_locks:
                scheduler.enqueue_scheduled_jobs()
            outage.succeeded()
        except RedisError as error:
            outage.failed(error)
            born = False  # Redis may come back empty
        stopping.wait(SCHEDULER_INTERVAL)
    try:
        scheduler.stop()
    except RedisError:  # its locks expire on their own
        pass


def enqueue_due_retries(queue_names, redis, log_level="INFO"):
    """A burst worker's scheduler: move the retries due now onto their queues, once."""
    scheduler = RQScheduler(queue_names, connection=redis, logging_level=log_level)
    scheduler.acquire_locks()
    if scheduler.acquired_locks:
        try:
            scheduler.register_birth()
            scheduler.enqueue_scheduled_jobs()
        finally:
            scheduler.release_locks()
            scheduler.register_death()


def enqueue_periodic(app, redis, stop):
    """Enqueue each periodic job when its interval has passed; a Redis key lets one worker of many
    do it.
    """
    queue, outage = Queue(MAINTENANCE, connection=redis), outage_for(app.config["REDIS_URL"])
    while not stop.wait(1):
        try:
            for name, path, every in PERIODIC:
                if redis.set(f"gateway:periodic:{name}", 1, nx=True, ex=interval(app, every)):
                    queue.enqueue(ENTRY, path, **JOB_OPTIONS)
            outage.succeeded()
        except RedisError as error:  # logged once per outage; the next pass tries again
            outage.failed(error)
