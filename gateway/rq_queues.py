"""RQ on Redis: enqueueing wake-ups, and the worker that runs them with the scheduler and periodic jobs."""
import logging
import threading

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker

from .clock import utcnow
from .jobs import JOB_TIMEOUT, MAINTENANCE, PERIODIC, QUEUES, WAKE_TTL, interval

log = logging.getLogger(__name__)

ENTRY = "gateway.jobs.run_job"
# Successful jobs leave nothing behind (the database keeps the record); failures stay a week.
JOB_OPTIONS = {"job_timeout": JOB_TIMEOUT, "result_ttl": 0, "failure_ttl": 7 * 24 * 3600}


class RedisQueues:
    """Enqueue wake-ups onto the RQ queues that `flask gateway worker` serves."""

    def __init__(self, url):
        # Short timeouts: a request that has just committed must not hang on an unreachable Redis.
        self.redis = Redis.from_url(url, socket_connect_timeout=1, socket_timeout=3)
        self.queues = {name: Queue(name, connection=self.redis) for name in QUEUES}

    def start(self):
        """Nothing runs in this process: the workers do."""

    def first_wake(self, unique, ttl):
        """Whether no wake-up for the same attempt is already on its way (the sweep repeats itself)."""
        return unique is None or bool(self.redis.set(f"gateway:wake:{unique}", 1, nx=True, ex=ttl))

    def enqueue(self, queue, path, args, unique=None):
        if not self.first_wake(unique, WAKE_TTL):
            return None
        return self.queues[queue].enqueue(ENTRY, path, *args, **JOB_OPTIONS)

    def enqueue_at(self, when, queue, path, args, unique=None):
        ttl = max(int((when - utcnow()).total_seconds()), 0) + WAKE_TTL
        if not self.first_wake(unique, ttl):
            return None
        return self.queues[queue].enqueue_at(when, ENTRY, path, *args, **JOB_OPTIONS)


def run_worker(app, queue_names=QUEUES, burst=False, log_level="INFO"):
    """Serve the queues in this process with RQ's scheduler, and enqueue the periodic jobs."""
    redis = Redis.from_url(app.config["REDIS_URL"])
    queues = [Queue(name, connection=redis) for name in queue_names]
    stop = threading.Event()
    if not burst:
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
