"""Fair shares of the webhook workers between receiving hosts: a slow host gets few attempts at once.

A host that has answered quickly of late (within WEBHOOK_SLOW_SECONDS, no attempt of its own overdue) takes
as many workers as it has deliveries. Any other host, a new one included, has at most
WEBHOOK_SLOW_HOST_CONCURRENCY attempts in flight; its further deliveries are parked in Redis instead of
holding a worker, and each attempt that ends wakes the next parked one (all of them once the host proves
fast). Six hanging attempts to one receiver therefore hold one worker, not all of them.

Redis holds only this bookkeeping: lost, it costs a wait for the outbox sweep, never a delivery.
"""

import logging
import time
from urllib.parse import urlsplit

from flask import current_app
from redis.exceptions import RedisError

from .. import jobs

log = logging.getLogger(__name__)

FAST_FOR = 60  # seconds a quick answer vouches for its host
WAKE_ALL = 200  # parked deliveries woken at once when their host proves fast

# KEYS: in-flight zset (member = attempt, score = start), fast marker, parked zset (member = delivery id).
# ARGV: now, start of the oldest live lease, start of the slow window, cap, attempt, delivery id, key ttl.
ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local fast = redis.call('EXISTS', KEYS[2]) == 1 and redis.call('ZCOUNT', KEYS[1], '-inf', ARGV[3]) == 0
if not fast and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[3], 'NX', ARGV[1], ARGV[6])
  redis.call('EXPIRE', KEYS[3], ARGV[7])
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('ZREM', KEYS[3], ARGV[6])
return 1
"""


def admit_script(redis):
    """ADMIT registered on this client: sent by its hash (EVALSHA), not as text at every attempt."""
    script = getattr(redis, "_gateway_admit", None)
    if script is None:
        script = redis._gateway_admit = redis.register_script(ADMIT)
    return script


def host_of(url):
    """The receiving host and port of a URL, the unit that gets a fair share."""
    parts = urlsplit(url)
    return (
        f"{(parts.hostname or '').lower()}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    )


def keys(host):
    """The Redis keys of a host: attempts in flight, its fast marker, its parked deliveries."""
    return (
        f"gateway:host:{host}:inflight",
        f"gateway:host:{host}:fast",
        f"gateway:host:{host}:parked",
    )


def redis_of_app():
    """The RQ backend's Redis client, or None without Redis (the in-process executor has no sharing to do)."""
    return getattr(jobs.backend(current_app._get_current_object()), "redis", None)


def admit(url, delivery_id, attempt):
    """Whether this attempt may go now; False parks the delivery until an attempt to its host ends."""
    redis = redis_of_app()
    if redis is None:
        return True
    config, now = current_app.config, time.time()
    lease = config["WEBHOOK_LEASE_SECONDS"]
    try:
        return bool(
            admit_script(redis)(
                keys=keys(host_of(url)),
                args=(
                    now,
                    now - lease,
                    now - config["WEBHOOK_SLOW_SECONDS"],
                    config["WEBHOOK_SLOW_HOST_CONCURRENCY"],
                    attempt_member(delivery_id, attempt),
                    delivery_id,
                    lease * 2,
                ),
            )
        )
    except RedisError as error:  # the claim in the database still guards the attempt
        log.warning(
            "host share not checked for delivery %s (%s); sending anyway", delivery_id, error
        )
        return True


def release(url, delivery_id, attempt, seconds=None):
    """The attempt ended (`seconds` long; None when it was never made): free its place, wake what it held up."""
    redis = redis_of_app()
    if redis is None:
        return
    inflight, fast, parked = keys(host_of(url))
    quick = seconds is not None and seconds < current_app.config["WEBHOOK_SLOW_SECONDS"]
    try:
        pipe = redis.pipeline()
        pipe.zrem(inflight, attempt_member(delivery_id, attempt))
        if seconds is not None:
            pipe.set(fast, 1, ex=FAST_FOR) if quick else pipe.delete(fast)
        pipe.zpopmin(parked, WAKE_ALL if quick else 1)
        woken = pipe.execute()[-1]
        for member, _ in woken:
            jobs.enqueue(jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, int(member))
    except RedisError as error:
        log.warning(
            "parked deliveries to %s not woken (%s); the sweep will wake them", host_of(url), error
        )


def attempt_member(delivery_id, attempt):
    """The in-flight entry of one attempt."""
    return f"{delivery_id}:{attempt}"
