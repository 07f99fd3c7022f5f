"""A total deadline for an HTTP attempt: read timeouts are per read, so one thread per process shuts
the socket of any attempt still running at its deadline (a receiver trickling bytes cannot hold it
longer)."""

import heapq
import itertools
import socket
import threading
import time

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

_local = threading.local()


class Deadline:
    """Ends an attempt after `seconds` in all by shutting its socket down: read timeouts are per
    read, so a receiver trickling a byte at a time would otherwise hold the attempt for as long as
    it likes."""

    def __init__(self, seconds):
        self.at = time.monotonic() + seconds
        self.connection, self.expired, self.over = None, False, False
        self.lock = threading.Lock()

    def watch(self, connection):
        """The connection the attempt is using now; shut at once if the deadline has passed."""
        with self.lock:
            self.connection = connection
            if self.expired:
                shut_down(connection)

    def expire(self):
        with self.lock:
            if not self.over:
                self.expired = True
                shut_down(self.connection)

    def __enter__(self):
        _local.deadline = self
        WATCHDOG.add(self)
        return self

    def __exit__(self, *exc_info):
        with self.lock:  # the watchdog must not touch a connection that is back in the pool
            self.over, self.connection = True, None
        _local.deadline = None


class Watchdog:
    """One thread for the process that expires each attempt still running at its deadline (a timer
    thread per attempt would cost as much as a delivery to a fast receiver)."""

    def __init__(self):
        self.condition = threading.Condition()
        self.due = []  # a heap of (deadline, sequence number, Deadline)
        self.sequence = itertools.count()
        self.thread = None

    def add(self, deadline):
        with self.condition:
            heapq.heappush(self.due, (deadline.at, next(self.sequence), deadline))
            if self.thread is None or not self.thread.is_alive():  # not started, or lost in a fork
                self.thread = threading.Thread(
                    target=self.run, name="webhook-watchdog", daemon=True
                )
                self.thread.start()
            elif self.due[0][2] is deadline:
                self.condition.notify()

    def run(self):
        with self.condition:
            while True:
                now = time.monotonic()
                while self.due and (self.due[0][2].over or self.due[0][0] <= now):
                    heapq.heappop(self.due)[2].expire()
                # Capped: a clock that jumps (a frozen one, in tests) can only delay a check by a
                # minute.
                self.condition.wait(min(self.due[0][0] - now, 60) if self.due else None)


WATCHDOG = Watchdog()


def shut_down(connection):
    """Shut the connection's socket down, which wakes the thread blocked on it with an end of
    stream.
    """
    sock = getattr(connection, "sock", None)
    if sock is None:
        return
    try:
        # The plain socket's shutdown, also under TLS: the TLS state belongs to the thread using it.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


def watch(connection):
    """Tell this thread's running attempt, if any, which connection it is using."""
    deadline = getattr(_local, "deadline", None)
    if deadline is not None:
        deadline.watch(connection)


class WatchedHTTPConnection(HTTPConnection):
    """A connection that reports itself to the attempt's deadline whenever it connects or sends."""

    def connect(self):
        watch(self)
        return super().connect()

    def request(self, *args, **kwargs):
        watch(self)
        return super().request(*args, **kwargs)


class WatchedHTTPSConnection(WatchedHTTPConnection, HTTPSConnection):
    """The TLS connection, watched the same way (the handshake included)."""


class WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = WatchedHTTPConnection


class WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = WatchedHTTPSConnection


class WatchedAdapter(HTTPAdapter):
    """requests' adapter over watched connections (through a proxy too), so a Deadline can end its
    requests.
    """

    POOLS = {"http": WatchedHTTPPool, "https": WatchedHTTPSPool}

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self.POOLS

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = self.POOLS
        return manager
