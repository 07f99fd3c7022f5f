"""SQLite's writers queue on a lock file beside the database (gateway.sqlite_writers).

The writers here run with a busy timeout of 0: SQLite answers "database is locked" at once to a
writer that finds the write lock taken, so any overlap the queue failed to prevent is an error.
Each runs in a process (or thread) of its own, as gunicorn's workers and the job threads do.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gateway.extensions import db
from gateway.sqlite_writers import QueuedWriters, engine_options, is_write, lock_path

ROOT = Path(__file__).resolve().parent.parent

# Opens a write transaction, holds it `hold` seconds with its row written, commits; `count` times.
WRITER = """
import sqlite3, sys, time
from gateway.sqlite_writers import QueuedWriters
path, count, hold, queued = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
factory = QueuedWriters if queued else sqlite3.Connection
connection = sqlite3.connect(path, timeout=0, factory=factory)
locked = 0
for number in range(count):
    try:
        connection.execute("INSERT INTO rows (writer) VALUES (?)", (sys.argv[5],))
        print("holding", flush=True)
        time.sleep(hold)
        connection.commit()
    except sqlite3.OperationalError as error:
        assert "locked" in str(error), error
        locked += 1
        connection.rollback()
print("locked", locked, flush=True)
"""


@pytest.fixture
def database(tmp_path):
    """A WAL database file with one table, as the gateway's are."""
    path = tmp_path / "queue.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, writer TEXT)")
    connection.commit()
    connection.close()
    return path


def writer(database, count, hold, queued=True, name="w"):
    """A writer process running WRITER."""
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database), str(count), str(hold), "1" if queued else "0"]
        + [name],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )


def locked_answers(process):
    """How many "database is locked" answers the writer met."""
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    return int(out.strip().splitlines()[-1].split()[1])


def rows(database):
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT count(*) FROM rows").fetchone()[0]


@pytest.mark.engine_independent
@pytest.mark.parametrize(
    ("sql", "writes"),
    [
        ("INSERT INTO rows VALUES (1)", True),
        ("  update rows SET writer = 'x'", True),
        ("DELETE FROM rows", True),
        ("REPLACE INTO rows VALUES (1, 'x')", True),
        ("BEGIN IMMEDIATE", True),
        ("SAVEPOINT sa_savepoint_1", True),
        ("SELECT * FROM rows", False),
        ("PRAGMA busy_timeout=10000", False),
        ("WITH x AS (SELECT 1) SELECT * FROM x", False),
    ],
)
def test_the_statements_that_take_the_write_lock_wait_for_the_queue(sql, writes):
    assert is_write(sql) is writes


@pytest.mark.engine_independent
def test_four_processes_write_without_ever_meeting_the_lock(database):
    # The control: the same writers without the queue collide (a busy timeout of 0 fails at once).
    unqueued = [writer(database, 40, 0.002, queued=False, name=str(n)) for n in range(4)]
    assert sum(locked_answers(process) for process in unqueued) > 0
    before = rows(database)

    queued = [writer(database, 40, 0.002, name=str(n)) for n in range(4)]
    assert sum(locked_answers(process) for process in queued) == 0
    assert rows(database) - before == 160


@pytest.mark.engine_independent
def test_a_writer_killed_inside_its_transaction_frees_the_queue(database):
    holder = writer(database, 1, 3600)
    assert holder.stdout.readline().strip() == "holding"
    waiting = writer(database, 1, 0)
    time.sleep(0.5)
    assert waiting.poll() is None  # queued behind the holder, not refused
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate(timeout=10)
    assert locked_answers(waiting) == 0
    assert rows(database) == 1  # the killed writer's row was never committed


@pytest.mark.engine_independent
def test_threads_of_one_process_queue_too(database):
    errors = []

    def write(name):
        connection = sqlite3.connect(
            database, timeout=0, factory=QueuedWriters, check_same_thread=False
        )
        try:
            for _ in range(40):
                connection.execute("INSERT INTO rows (writer) VALUES (?)", (name,))
                time.sleep(0.001)
                connection.commit()
        except sqlite3.OperationalError as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(str(n),)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert rows(database) == 120


@pytest.mark.engine_independent
def test_a_second_connection_of_the_writing_thread_meets_the_busy_handler_not_a_deadlock(database):
    # The thread's own open transaction would never end while it waited: SQLite's busy timeout
    # refuses the second writer instead, as it did before the queue.
    first = sqlite3.connect(database, factory=QueuedWriters)
    second = sqlite3.connect(database, timeout=0.1, factory=QueuedWriters)
    first.execute("INSERT INTO rows (writer) VALUES ('first')")
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        second.execute("INSERT INTO rows (writer) VALUES ('second')")
    assert time.monotonic() - started < 5
    first.commit()
    second.rollback()
    second.execute("INSERT INTO rows (writer) VALUES ('second')")
    second.commit()
    assert rows(database) == 2
    first.close()
    second.close()


@pytest.mark.engine_independent
@pytest.mark.parametrize("end", ["commit", "rollback", "close"])
def test_the_queue_is_left_when_the_transaction_ends(database, end):
    connection = sqlite3.connect(database, factory=QueuedWriters)
    other = sqlite3.connect(database, timeout=0, factory=QueuedWriters, check_same_thread=False)
    connection.execute("INSERT INTO rows (writer) VALUES ('x')")
    assert connection.holding
    getattr(connection, end)()
    # Another thread (the kernel lock is per open file, so this needs no other process) writes at
    # once.
    done = []
    thread = threading.Thread(
        target=lambda: done.append(other.execute("INSERT INTO rows (writer) VALUES ('y')"))
    )
    thread.start()
    thread.join(timeout=5)
    assert done and not thread.is_alive()
    other.commit()
    other.close()
    if end != "close":
        connection.close()


@pytest.mark.engine_independent
def test_reads_never_wait_for_the_queue(database):
    holder = writer(database, 1, 3600)
    try:
        assert holder.stdout.readline().strip() == "holding"
        reader = sqlite3.connect(database, timeout=0, factory=QueuedWriters)
        assert reader.execute("SELECT count(*) FROM rows").fetchone() == (0,)
        assert not reader.holding
        reader.close()
    finally:
        holder.kill()
        holder.communicate(timeout=10)


@pytest.mark.engine_independent
def test_only_a_sqlite_file_gets_a_queue(tmp_path):
    assert lock_path(tmp_path / "a.sqlite3") == str(tmp_path / "a.sqlite3") + "-writers"
    assert lock_path(":memory:") is None
    assert engine_options("sqlite://", {}) == {}
    assert engine_options("postgresql+psycopg://db/x", {"pool_pre_ping": True}) == {
        "pool_pre_ping": True
    }
    assert engine_options("sqlite:////srv/gateway.sqlite3", {})["connect_args"] == {
        "factory": QueuedWriters
    }


@pytest.mark.engine_independent
def test_a_queue_file_that_cannot_be_opened_leaves_the_busy_handler(database, caplog):
    Path(lock_path(database)).mkdir()
    connection = sqlite3.connect(database, factory=QueuedWriters)
    connection.execute("INSERT INTO rows (writer) VALUES ('x')")
    connection.commit()
    assert connection.queue is None and rows(database) == 1
    assert "will not queue" in caplog.text
    connection.close()


@pytest.mark.engine_independent
def test_the_queue_file_takes_the_database_s_mode(database):
    database.chmod(0o640)
    sqlite3.connect(database, factory=QueuedWriters).close()
    assert Path(lock_path(database)).stat().st_mode & 0o777 == 0o640 & ~current_umask()


@pytest.mark.engine_independent
@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_root_leaves_a_queue_file_the_database_s_owner_can_open(database):
    os.chown(database, 4321, 4321)
    sqlite3.connect(database, factory=QueuedWriters).close()
    made = Path(lock_path(database)).stat()
    assert (made.st_uid, made.st_gid) == (4321, 4321)


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_app_s_sqlite_connections_queue_and_keep_their_pragmas(app):
    if db.engine.dialect.name != "sqlite":
        pytest.skip("the queue is for SQLite files")
    connection = db.engine.raw_connection()
    try:
        raw = connection.driver_connection
        assert isinstance(raw, QueuedWriters) and raw.queue is not None
        pragmas = {
            name: raw.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "busy_timeout", "foreign_keys", "synchronous")
        }
        assert pragmas == {
            "journal_mode": "wal",
            "busy_timeout": 10000,
            "foreign_keys": 1,
            "synchronous": 1,
        }
    finally:
        connection.close()
