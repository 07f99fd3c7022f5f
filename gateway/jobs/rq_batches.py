"""Batched wake-ups on Redis: a burst of wake-ups of one job function shares a few RQ jobs.

Each job function has a list of wake-ups waiting for a job (`WakeBatch.waiting`) and a key held
while one job of it is queued and not yet started (`WakeBatch.queued`). A wake-up that finds the key
held joins the list; one that finds it free takes it and gets a job of its own. That job, after its
own wake-up, takes the waiting ones, oldest first (gateway.jobs.rq_queues.run_batch). RQ's own work
per job (about fifteen round trips to Redis) is then paid once per batch, not once per wake-up.
"""

import json
import weakref

# KEYS: the wake-up's own key ("" for none), the batch's queued key, its list. ARGV: the keys' ttl,
# the wake-up as the list keeps it. Returns 0: already on its way (its own key is held); 1: the
# caller queues a job (it holds the batch's queued key now); 2: joined the queued job's batch; 3:
# joined it as the first to wait: the caller queues a helper too, so that a second idle worker
# starts on the waiting ones at once instead of when the first job starts.
JOIN = """
if KEYS[1] ~= '' and not redis.call('SET', KEYS[1], 1, 'NX', 'EX', ARGV[1]) then
  return 0
end
if redis.call('SET', KEYS[2], 1, 'NX', 'EX', ARGV[1]) then
  return 1
end
if redis.call('RPUSH', KEYS[3], ARGV[2]) == 1 then
  return 3
end
return 2
"""
# Waiting wake-ups are never left without a job: whenever some wait and no job is queued, a helper
# is (returns 1: the caller queues it; the batch's key is held for it). The helper has no wake-up of
# its own: it takes the waiting ones, oldest first, like any job of the batch. So a second worker
# finds work while the first is busy with a batch, and a batch that ends early (its budget spent,
# its worker killed) leaves a job behind for the rest.
HAND_ON = """
if redis.call('LLEN', KEYS[3]) > 0 and redis.call('SET', KEYS[2], 1, 'NX', 'EX', ARGV[1]) then
  return 1
end
return 0
"""
# A batch's job starts: its own keys are freed (as run_rq_job frees a job's wake-up key; KEYS[4]
# is the queued key if this job held it, else ""), and a helper is asked for if wake-ups wait.
# KEYS as JOIN's; ARGV: the keys' ttl.
START = (
    """
if KEYS[1] ~= '' then redis.call('DEL', KEYS[1]) end
if KEYS[4] ~= '' then redis.call('DEL', KEYS[4]) end
"""
    + HAND_ON
)
# The next waiting wake-up, its own key freed (it runs now), and whether to queue a helper. KEYS as
# JOIN's (KEYS[1] unused); ARGV: the keys' ttl.
TAKE = (
    """
local taken = redis.call('LPOP', KEYS[3])
if not taken then return {false, 0} end
local key = cjson.decode(taken)['key']
if type(key) == 'string' then redis.call('DEL', key) end
local helper = (function()
"""
    + HAND_ON
    + """
end)()
return {taken, helper}
"""
)

OWN, FIRST_TO_WAIT = 1, 3  # JOIN's answers that ask the caller to queue a job

_scripts = weakref.WeakKeyDictionary()  # Redis client → {script text: the script registered on it}


def script(redis, text):
    """`text` registered on this client once: sent by its hash (EVALSHA), not as text each time."""
    registered = _scripts.setdefault(redis, {})
    if text not in registered:
        registered[text] = redis.register_script(text)
    return registered[text]


class WakeBatch:
    """The batched wake-ups of one job function on one queue; each method one round trip."""

    def __init__(self, redis, queue, path, ttl):
        self.redis, self.queue, self.path, self.ttl = redis, queue, path, ttl
        self.waiting = f"gateway:batch:{queue}:{path}"
        self.queued = f"{self.waiting}:queued"

    def keys(self, key=None):
        return [key or "", self.queued, self.waiting]

    def join(self, key, args):
        """A new wake-up (`key` its own key or None): JOIN's answer (OWN: it needs a job of its
        own, the batch's queued key is held for it; FIRST_TO_WAIT: it joined, and a helper must be
        queued; anything else: it joined, or was already on its way).
        """
        entry = json.dumps({"key": key, "args": list(args)})
        return script(self.redis, JOIN)(keys=self.keys(key), args=[self.ttl, entry])

    def start(self, key, held_queued):
        """The batch's job starts: free its keys (the queued key if it held it); True when a helper
        must be queued."""
        keys = [*self.keys(key), self.queued if held_queued else ""]
        return script(self.redis, START)(keys=keys, args=[self.ttl]) == 1

    def take(self):
        """The oldest waiting wake-up's arguments (None when none waits), and whether a helper
        must be queued.
        """
        taken, helper = script(self.redis, TAKE)(keys=self.keys(), args=[self.ttl])
        return (None if taken is None else json.loads(taken)["args"]), helper == 1
