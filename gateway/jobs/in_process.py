"""Jobs without Redis: the same job functions on a small thread pool, periodic jobs on a timer
thread.
"""

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from werkzeug.utils import import_string

from . import MAINTENANCE, PERIODIC, interval

log = logging.getLogger(__name__)


class InProcessExecutor:
    """The same job functions on a small thread pool, and the periodic jobs on a timer thread."""

    def __init__(self, app):
        self.app = app
        self.pool = None
        self.periodic = False
        self.lock = threading.Lock()
        self.pending = set()  # wake-up keys of jobs queued or running on the pool

    @property
    def enabled(self):
        return bool(self.app.config.get("JOBS_IN_PROCESS", True))

    def start(self, periodic=True):
        """Start the pool (and, for a serving process, the periodic timer) once per process."""
        if not self.enabled:
            return None
        if self.pool is not None and (self.periodic or not periodic):
            return self.pool
        with self.lock:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gateway-job")
            if periodic and not self.periodic:
                self.periodic = True
                threading.Thread(
                    target=self.run_periodic, name="gateway-periodic", daemon=True
                ).start()
        return self.pool

    def enqueue(self, queue, path, args, unique=None):
        """Submit the job; a wake-up whose `unique` key is already queued or running is dropped."""
        pool = self.start(periodic=False)
        if pool is None:
            return None
        if unique is not None:
            with self.lock:
                if unique in self.pending:
                    return None
                self.pending.add(unique)
        try:
            return pool.submit(self.run, path, args, unique)
        except BaseException:
            self.release(unique)
            raise

    def release(self, unique):
        """Let the next wake-up with this key through."""
        with self.lock:
            self.pending.discard(unique)

    def enqueue_at(self, when, queue, path, args, unique=None):
        """Nothing to do: the sweep wakes every due row."""

    def run(self, path, args, unique=None):
        """One job in its own application context; a failure is logged, the row stays due."""
        try:
            with self.app.app_context():
                return import_string(path)(*args)
        except Exception:  # noqa: BLE001 - a background job must not kill its thread
            log.exception("background job %s%r failed", path, args)
        finally:
            self.release(unique)

    def run_periodic(self):
        """Submit each periodic job whenever its interval has passed, unless its last run is still
        going.
        """
        last_run = {}
        while True:
            now = time.monotonic()
            for name, path, every in PERIODIC if self.enabled else ():
                if name not in last_run or now - last_run[name] >= interval(self.app, every):
                    last_run[name] = now
                    try:
                        self.enqueue(MAINTENANCE, path, (), unique=f"periodic:{name}")
                    except RuntimeError:  # the interpreter is shutting down
                        return
            time.sleep(1)
