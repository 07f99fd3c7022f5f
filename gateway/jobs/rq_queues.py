"""RQ on Redis: enqueueing wake-ups (gateway.jobs.rq_worker runs them), skipped while Redis is
down."""

import logging
import math
from datetime import timedelta

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, get_current_job

from ..clock import utcnow
from . import JOB_TIMEOUT, QUEUES, WAKE_TTL, run_job
from .redis_health import RedisUnavailable, outage_for

log = logging.getLogger(__name__)

ENTRY = "gateway.jobs.rq_queues.run_rq_job"
# A successful job expires a minute after it ends (the database keeps the record); failures stay a
# week. Not at once (result_ttl 0): deleting a finished job takes RQ 28 round trips to Redis per job
# instead of 19, which capped a worker's deliveries per second; the expired hashes are small and
# prune themselves.
JOB_OPTIONS = {"job_timeout": JOB_TIMEOUT, "result_ttl": 60, "failure_ttl": 7 * 24 * 3600}


class RedisQueues:
    """Enqueue wake-ups onto the RQ queues that `flask gateway worker` serves; skipped while Redis
    is down.
    """

    def __init__(self, url):
        # Short timeouts: a request that has just committed must not hang on an unreachable Redis.
        self.redis = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=3)
        self.queues = {name: Queue(name, connection=self.redis) for name in QUEUES}
        self.outage = outage_for(url)

    def start(self):
        """Nothing runs in this process: the workers do."""

    def first_wake(self, key, ttl):
        """Whether no wake-up for the same attempt is already on its way (the sweep repeats
        itself)."""
        return key is None or bool(self.redis.set(key, 1, nx=True, ex=ttl))

    def forget_wake(self, unique):
        """Drop the wake-up keys of an attempt whose job came to nothing, so the sweep may wake it
        again.
        """
        if unique is not None:
            self.redis.delete(wake_key(unique), scheduled_key(unique))

    def enqueue(self, queue, path, args, unique=None):
        return self._reaching_redis(self._enqueue, queue, path, args, unique)

    def enqueue_at(self, when, queue, path, args, unique=None):
        return self._reaching_redis(self._enqueue_at, when, queue, path, args, unique)

    def _reaching_redis(self, enqueue, *args):
        """Run `enqueue` unless Redis is known to be down; RedisUnavailable (logged once per outage)
        if it is.
        """
        if self.outage.skipping():
            raise RedisUnavailable(
                f"Redis at {self.outage.where} is down; the sweep will wake the row"
            )
        try:
            job = enqueue(*args)
        except RedisError as error:
            if self.outage.failed(error):
                raise RedisUnavailable(f"Redis at {self.outage.where} is down: {error}") from error
            raise
        self.outage.succeeded()
        return job

    def _enqueue(self, queue, path, args, unique):
        key = wake_key(unique)
        if not self.first_wake(key, WAKE_TTL):
            return None
        return keyed(
            self.redis,
            [key],
            self.queues[queue].enqueue,
            ENTRY,
            path,
            *args,
            meta={"wake": key},
            **JOB_OPTIONS,
        )

    def _enqueue_at(self, when, queue, path, args, unique):
        # RQ keeps whole seconds and rounds down: rounded up, the job can never fire before `when`.
        when = round_up_to_second(when)
        ttl = max(math.ceil((when - utcnow()).total_seconds()), 0) + WAKE_TTL
        # A key of its own: a scheduled retry must not stop the sweep waking the row once it is due.
        key = scheduled_key(unique)
        if not self.first_wake(key, ttl):
            return None
        return keyed(
            self.redis,
            [key],
            self.queues[queue].enqueue_at,
            when,
            ENTRY,
            path,
            *args,
            meta={"wake": key},
            **JOB_OPTIONS,
        )


def keyed(redis, keys, enqueue, *args, **kwargs):
    """Enqueue; a failure removes the keys taken for it, so the failed wake-up suppresses
    nothing.
    """
    try:
        return enqueue(*args, **kwargs)
    except BaseException:
        keys = [key for key in keys if key is not None]
        if keys:
            try:
                redis.delete(*keys)
            except RedisError as error:
                log.warning("wake-up keys %s not removed: %s", keys, error)
        raise


def run_rq_job(path, *args):
    """The RQ entry point: free the job's wake-up key as it starts, then run `path(*args)`.

    From here on a new wake-up of the same attempt may be queued: should this job die before
    claiming its row, the next sweep wakes the row again instead of waiting out WAKE_TTL. Two jobs
    for one attempt are harmless: only the one whose claim (a guarded UPDATE) matches does the work.
    """
    job = get_current_job()
    key = job.meta.get("wake") if job is not None else None
    if key:
        try:
            job.connection.delete(key)
        except RedisError as error:  # the key expires with WAKE_TTL anyway
            log.warning("wake-up key %s not freed: %s", key, error)
    run_job(path, *args)


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
