"""Fair shares of the webhook workers between receiving hosts: a slow host gets few attempts at
once.

A host that has answered quickly of late (within WEBHOOK_SLOW_SECONDS, no attempt of its own
overdue) takes as many workers as it has deliveries. Any other host, a new one included, has at most
WEBHOOK_SLOW_HOST_CONCURRENCY attempts in flight; its further deliveries are parked in Redis instead
of holding a worker, and each attempt that ends wakes the next parked one (all of them once the host
proves fast). Six hanging attempts to one receiver therefore hold one worker, not all of them.

Brands share the workers fairly too: attempts to hosts that are not fast count against their brand,
at most WEBHOOK_SLOW_BRAND_CONCURRENCY at once, so one brand's many slow receivers (each host
within its own share) cannot take every worker from another brand's deliveries. A delivery held
back for its brand is parked the same way and woken when one of the brand's attempts ends.

An attempt's place lives SLOT_SECONDS unless its process renews it (a thread does, every second,
while the attempt runs; never past the lease): a worker killed mid-attempt frees its place within
seconds, not a lease later, and the sweep's next wake-up of the host's parked deliveries goes.

Redis holds only this bookkeeping: lost, it costs a wait for the outbox sweep, never a delivery.
"""

import logging
import threading
import time
from urllib.parse import urlsplit

from flask import current_app
from redis.exceptions import RedisError

from .. import jobs

log = logging.getLogger(__name__)

FAST_FOR = 60  # seconds a quick answer vouches for its host
WAKE_ALL = 200  # parked deliveries woken at once when their host proves fast
SLOT_SECONDS = 5  # an attempt's place in flight lapses this long after its process last renewed it
RENEW_EVERY = 1  # seconds between renewals of this process's places

# KEYS: the host's in-flight zset (member = attempt, score = when its place lapses unless
# renewed), its fast marker, its parked zset (member = delivery id); the brand's in-flight zset of
# attempts to hosts that are not fast, the brand's parked zset. ARGV: now, when this attempt's place
# lapses, host cap, attempt, delivery id, key ttl, brand cap.
ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 0 then
  -- This very attempt already in flight was left by a process that died before its claim: it is
  -- taken over, not counted against itself.
  local host_held = redis.call('ZCARD', KEYS[1])
    - (redis.call('ZSCORE', KEYS[1], ARGV[4]) and 1 or 0)
  local brand_held = redis.call('ZCARD', KEYS[4])
    - (redis.call('ZSCORE', KEYS[4], ARGV[4]) and 1 or 0)
  local parked = nil
  if host_held >= tonumber(ARGV[3]) then
    parked = KEYS[3]
  elseif brand_held >= tonumber(ARGV[7]) then
    parked = KEYS[5]
  end
  if parked then
    redis.call('ZADD', parked, 'NX', ARGV[1], ARGV[5])
    redis.call('EXPIRE', parked, ARGV[6])
    return 0
  end
  redis.call('ZADD', KEYS[4], ARGV[2], ARGV[4])
  redis.call('EXPIRE', KEYS[4], ARGV[6])
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('ZREM', KEYS[3], ARGV[5])
redis.call('ZREM', KEYS[5], ARGV[5])
return 1
"""


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


def brand_keys(brand_id):
    """The Redis keys of a brand: its attempts in flight to hosts that are not fast, its parked
    deliveries.
    """
    return (f"gateway:brand:{brand_id}:slow-inflight", f"gateway:brand:{brand_id}:parked")


def redis_of_app():
    """The RQ backend's Redis client, or None without Redis (the in-process executor has no sharing
    to do).
    """
    return getattr(jobs.backend(current_app._get_current_object()), "redis", None)


def admit(url, delivery_id, attempt, brand_id=None):
    """Whether this attempt may go now; False parks the delivery until an attempt to its host (or
    brand) ends.
    """
    redis = redis_of_app()
    if redis is None:
        return True
    config, now = current_app.config, time.time()
    lease = config["WEBHOOK_LEASE_SECONDS"]
    host_keys, member = keys(host_of(url)), attempt_member(delivery_id, attempt)
    try:
        admitted = bool(
            redis.register_script(ADMIT)(
                keys=host_keys + brand_keys(brand_id),
                args=(
                    now,
                    now + SLOT_SECONDS,
                    config["WEBHOOK_SLOW_HOST_CONCURRENCY"],
                    member,
                    delivery_id,
                    lease * 2,
                    config["WEBHOOK_SLOW_BRAND_CONCURRENCY"],
                ),
            )
        )
    except RedisError as error:  # the claim in the database still guards the attempt
        log.warning(
            "host share not checked for delivery %s (%s); sending anyway", delivery_id, error
        )
        return True
    if admitted:
        PLACES.hold(redis, host_keys, brand_keys(brand_id)[0], member, lease, config)
    return admitted


def release(url, delivery_id, attempt, seconds=None, brand_id=None):
    """The attempt ended (`seconds` long; None when it was never made): free its place, wake what it
    held up.
    """
    redis = redis_of_app()
    if redis is None:
        return
    inflight, fast, parked = keys(host_of(url))
    brand_inflight, brand_parked = brand_keys(brand_id)
    quick = seconds is not None and seconds < current_app.config["WEBHOOK_SLOW_SECONDS"]
    PLACES.let_go(inflight, attempt_member(delivery_id, attempt))
    try:
        pipe = redis.pipeline()
        pipe.zrem(inflight, attempt_member(delivery_id, attempt))
        # Not this attempt's brand share, or not any more (its host proved fast meanwhile): ZREM
        # then is a no-op.
        pipe.zrem(brand_inflight, attempt_member(delivery_id, attempt))
        if seconds is not None:
            pipe.set(fast, 1, ex=FAST_FOR) if quick else pipe.delete(fast)
        pipe.zpopmin(brand_parked, 1)
        pipe.zpopmin(parked, WAKE_ALL if quick else 1)
        results = pipe.execute()
        woken = results[-1] + results[-2]
        for member, _ in woken:
            jobs.enqueue(jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, int(member))
    except RedisError as error:
        log.warning(
            "parked deliveries to %s not woken (%s); the sweep will wake them", host_of(url), error
        )


def attempt_member(delivery_id, attempt):
    """The in-flight entry of one attempt."""
    return f"{delivery_id}:{attempt}"


class Places:
    """This process's attempts in flight, whose places a thread renews while they run (at most a
    lease): a process that dies stops renewing, and its places lapse within SLOT_SECONDS.

    An attempt running past WEBHOOK_SLOW_SECONDS also takes its host's fast marker away at each
    renewal, so that the host's other deliveries wait their turn while it hangs.
    """

    def __init__(self):
        self.lock = threading.Lock()
        # (host in-flight key, attempt) → (Redis client, host keys, brand in-flight key, started,
        # (lease, WEBHOOK_SLOW_SECONDS))
        self.held = {}
        self.thread = None

    def hold(self, redis, host_keys, brand_inflight, member, lease, config):
        """Keep renewing this attempt's place until let go, or for a lease at most."""
        limits = (lease, config["WEBHOOK_SLOW_SECONDS"])
        with self.lock:
            self.held[(host_keys[0], member)] = (
                redis,
                host_keys,
                brand_inflight,
                time.time(),
                limits,
            )
            if self.thread is None or not self.thread.is_alive():  # none yet, or forked without it
                self.thread = threading.Thread(
                    target=self.renew_forever, name="gateway-webhook-places", daemon=True
                )
                self.thread.start()

    def let_go(self, inflight, member):
        """The attempt ended: renew its place no more."""
        with self.lock:
            self.held.pop((inflight, member), None)

    def renew_forever(self):
        """Renew every held place each RENEW_EVERY seconds, for as long as the process lives."""
        pause = threading.Event()
        while not pause.wait(RENEW_EVERY):
            self.renew(time.time())

    def renew(self, now):
        """Push each held place's lapse SLOT_SECONDS ahead; drop those held past their lease."""
        with self.lock:
            for key, (_, _, _, started, (lease, _)) in list(self.held.items()):
                if not 0 <= now - started <= lease:  # a leak, or a clock moved (freezegun)
                    del self.held[key]
            held = list(self.held.items())
        pipes = {}
        for (_, member), (redis, host_keys, brand_inflight, started, (_, slow)) in held:
            pipe = pipes.setdefault(id(redis), (redis, redis.pipeline(transaction=False)))[1]
            # XX: a place the attempt already gave up (or Redis lost) is not put back.
            pipe.zadd(host_keys[0], {member: now + SLOT_SECONDS}, xx=True)
            pipe.zadd(brand_inflight, {member: now + SLOT_SECONDS}, xx=True)
            if now - started > slow:
                pipe.delete(host_keys[1])
        for redis, pipe in pipes.values():
            try:
                pipe.execute()
            except RedisError as error:  # the places lapse; the next pass tries again
                log.warning("places of attempts in flight not renewed (%s)", error)


PLACES = Places()
