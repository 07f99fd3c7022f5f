"""SQLite's writers wait their turn in a kernel queue instead of in SQLite's busy handler.

SQLite lets one connection write at a time. A connection that finds the write lock taken sleeps in
its busy handler, in growing steps (1, 2, 5, 10, 15, 20, 25 … 100 ms), and tries again: with a
few gunicorn workers writing at once, a request can sleep 30 ms for a lock that was free after 2.
So each connection to a database file first takes an exclusive `flock` on a file beside it
(`<database>-writers`), just before the statement that would take SQLite's write lock, and lets it
go once the transaction ends. A waiter blocks in the kernel and wakes the moment the lock is free.

Only the order of waiting changes, never what may run: SQLite's own lock still guards every write,
and whatever does not go through this queue (the `sqlite3` shell, a DDL statement outside a
transaction) meets the busy handler as before. The kernel drops a dead process's lock.

One trade: a queued writer waits as long as the holder keeps its transaction open, where the busy
handler gave up after `busy_timeout` (10 s). Nothing here holds a write transaction across network
I/O (deliveries and mail are leased, then sent after the commit), and gunicorn's worker timeout
ends a request stuck inside one, which frees the queue.
"""

import fcntl
import logging
import os
import sqlite3
import threading

log = logging.getLogger(__name__)

# The statements before which Python's sqlite3 opens a transaction that takes the write lock at
# once (INSERT, UPDATE, DELETE, REPLACE), and the explicit ways to open one.
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "BEGIN", "SAVEPOINT")


def is_write(sql):
    """Whether `sql` opens (or is) a write transaction when no transaction is open."""
    return sql.lstrip()[:9].upper().startswith(WRITES)


def lock_path(database):
    """The queue's lock file for a database file, or None for an in-memory or URI database."""
    name = os.fspath(database)
    if name in ("", ":memory:") or name.startswith("file:"):
        return None
    return name + "-writers"


def open_queue(database):
    """The database's queue file, open, made with the database's owner and mode; None for a
    database without a file, or when the file cannot be opened (the busy handler then does).
    """
    path = lock_path(database)
    if path is None:
        return None
    try:
        owner = os.stat(database)
    except OSError:
        owner = None
    try:
        queue = os.open(path, os.O_RDWR | os.O_CREAT, owner.st_mode & 0o666 if owner else 0o600)
    except OSError as error:
        log.warning("SQLite writers will not queue: cannot open %s (%s)", path, error)
        return None
    if owner is not None and os.geteuid() == 0:
        # root (an operator's command) must not leave a file the service's user cannot open
        os.fchown(queue, owner.st_uid, owner.st_gid)
    return queue


class QueuedWriters(sqlite3.Connection):
    """A `sqlite3.Connection` (passed as `factory`) whose write transactions queue on a lock file.

    The lock is held from just before the first writing statement until the transaction's commit
    or rollback, as SQLite's own write lock is.
    """

    # This thread's connections that hold a queue lock: a second connection writing while the
    # first holds it would wait on its own thread (SQLite would fail it after its busy timeout).
    held = threading.local()

    def __init__(self, database, *args, **kwargs):
        super().__init__(database, *args, **kwargs)
        self.queue = open_queue(database)
        self.holding = False

    def cursor(self, factory=None):
        return super().cursor(factory or QueuedCursor)

    def execute(self, sql, *args):
        self.wait_to_write(sql)
        return super().execute(sql, *args)

    def executemany(self, sql, *args):
        self.wait_to_write(sql)
        return super().executemany(sql, *args)

    def wait_to_write(self, sql):
        """Before a statement that opens a write transaction, wait for this database's queue."""
        if self.holding or self.queue is None or self.in_transaction or not is_write(sql):
            return
        if getattr(self.held, "count", 0):
            return  # this thread already holds the queue through another connection
        fcntl.flock(self.queue, fcntl.LOCK_EX)
        self.holding = True
        self.held.count = getattr(self.held, "count", 0) + 1

    def let_go(self):
        """Leave the queue, once the transaction has ended."""
        if self.holding:
            self.holding = False
            self.held.count = max(getattr(self.held, "count", 1) - 1, 0)
            fcntl.flock(self.queue, fcntl.LOCK_UN)

    def commit(self):
        try:
            super().commit()
        finally:
            if not self.in_transaction:
                self.let_go()

    def rollback(self):
        try:
            super().rollback()
        finally:
            if not self.in_transaction:
                self.let_go()

    def close(self):
        try:
            super().close()
        finally:
            self.let_go()
            if self.queue is not None:
                os.close(self.queue)
                self.queue = None


class QueuedCursor(sqlite3.Cursor):
    """A cursor whose writing statements wait for the connection's queue first."""

    def execute(self, sql, *args):
        self.connection.wait_to_write(sql)
        return super().execute(sql, *args)

    def executemany(self, sql, *args):
        self.connection.wait_to_write(sql)
        return super().executemany(sql, *args)


def engine_options(uri, options):
    """SQLALCHEMY_ENGINE_OPTIONS with the queue's connection factory for a SQLite file."""
    if not uri.startswith("sqlite") or uri in ("sqlite://", "sqlite:///:memory:"):
        return options
    connect_args = {"factory": QueuedWriters, **options.get("connect_args", {})}
    return {**options, "connect_args": connect_args}
