"""RQ on Redis: enqueueing wake-ups, and the worker that runs them with the scheduler and periodic jobs."""
import logging
import math
import threading
from datetime import timedelta

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker

from .clock import utcnow
from .jobs import JOB_TIMEOUT, MAINTENANCE, PERIODIC, QUEUES, WAKE_TTL, interval

log = logging.getLogger(__name__)

ENTRY = "gateway.jobs.run_job"
# A successful job expires a minute after it ends (the database keeps the record); failures stay a week.
# Not at once (result_ttl 0): deleting a finished job takes RQ 28 round trips to Redis per job instead of
# 19, which capped a worker's deliveries per second; the expired hashes are small and prune themselves.
JOB_OPTIONS = {"job_timeout": JOB_TIMEOUT, "result_ttl": 60, "failure_ttl": 7 * 24 * 3600}


class RedisQueues:
    """Enqueue wake-ups onto the RQ queues that `flask gateway worker` serves."""

    def __init__(self, url):
        # Short timeouts: a request that has just committed must not hang on an unreachable Redis.
        self.redis = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=3)
        self.queues = {name: Queue(name, connection=self.redis) for name in QUEUES}

    def start(self):
        """Nothing runs in this process: the workers do."""

    def first_wake(self, key, ttl):
        """Whether no wake-up for the same attempt is already on its way (the sweep repeats itself)."""
        return key is None or bool(self.redis.set(key, 1, nx=True, ex=ttl))

    def forget_wake(self, unique):
        """Drop the wake-up keys of an attempt whose job came to nothing, so the sweep may wake it again."""
        if unique is not None:
            self.redis.delete(wake_key(unique), scheduled_key(unique))

    def enqueue(self, queue, path, args, unique=None):
        key = wake_key(unique)
        if not self.first_wake(key, WAKE_TTL):
            return None
        return self._keyed(key, self.queues[queue].enqueue, ENTRY, path, *args, **JOB_OPTIONS)

    def enqueue_at(self, when, queue, path, args, unique=None):
        # RQ keeps whole seconds and rounds down: rounded up, the job can never fire before `when`.
        when = round_up_to_second(when)
        ttl = max(math.ceil((when - utcnow()).total_seconds()), 0) + WAKE_TTL
        # A key of its own: a scheduled retry must not stop the sweep waking the row once it is due.
        key = scheduled_key(unique)
        if not self.first_wake(key, ttl):
            return None
        return self._keyed(key, self.queues[queue].enqueue_at, when, ENTRY, path, *args, **JOB_OPTIONS)

    def _keyed(self, key, enqueue, *args, **kwargs):
        """Enqueue; a failure removes the wake-up key it took, so the failed wake-up suppresses nothing."""
        try:
            return enqueue(*args, **kwargs)
        except BaseException:
            if key is not None:
                try:
                    self.redis.delete(key)
                except RedisError as error:
                    log.warning("wake-up key %s not removed: %s", key, error)
            raise


def wake_key(unique):
    """The Redis key that marks an immediate wake-up of this attempt as on its way."""
    return None if unique is None else f"gateway:wake:{unique}"


def scheduled_key(unique):
    """The Redis key that marks a scheduled wake-up of this attempt as on its way."""
    return None if unique is None else f"gateway:wake-at:{unique}"


def round_up_to_second(when):
    """`when` itself if a whole second, else the next whole second."""
    whole = when.replace(microsecond=0)
    return whole if whole == when else whole + timedelta(seconds=1)


def run_worker(app, queue_names=QUEUES, burst=False, log_level="INFO"):
    """Serve the queues in this process with RQ's scheduler; with `maintenance`, enqueue the periodic jobs."""
    redis = Redis.from_url(app.config["REDIS_URL"])
    queues = [Queue(name, connection=redis) for name in queue_names]
    stop = threading.Event()
    # Periodic jobs go onto the maintenance queue: only a worker serving it schedules them, so a
    # `--queues webhooks` worker adds no sweeps that it would leave to others.
    if not burst and MAINTENANCE in queue_names:
        threading.Thread(target=enqueue_periodic, args=(app, redis, stop), name="gateway-periodic",
                         daemon=True).start()
    try:
        # SimpleWorker: no fork per job, so one process sustains hundreds of deliveries a second;
        # a crash loses nothing, since every claim on a row expires.
        return SimpleWorker(queues, connection=redis).work(with_scheduler=True, burst=burst, logging_level=log_level)
    finally:
        stop.set()


def enqueue_periodic(app, redis, stop):
    """Enqueue each periodic job when its interval has passed; a Redis key lets one worker of many do it."""
    queue = Queue(MAINTENANCE, connection=redis)
    # The first wait also lets RQ fork its scheduler before this thread touches anything.
    while not stop.wait(1):
        for name, path, every in PERIODIC:
            try:
                if redis.set(f"gateway:periodic:{name}", 1, nx=True, ex=interval(app, every)):
                    queue.enqueue(ENTRY, path, **JOB_OPTIONS)
            except RedisError as error:
                log.warning("periodic job %s not enqueued: %s", name, error)
