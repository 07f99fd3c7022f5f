"""SQLite's writers wait for each other (WAL, busy_timeout, BEGIN IMMEDIATE) instead of failing.

Each writer runs in a process of its own, as gunicorn's workers and `flask gateway worker` do, on
the app's own engine settings (gateway.tune_sqlite). The control runs the same load without them
(busy timeout 0) to show that it does collide.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from gateway import create_app
from gateway.extensions import db

ROOT = Path(__file__).resolve().parent.parent

# `count` transactions, each reading, then writing a row, holding the write `hold` seconds, and
# committing; through the app's engine ("app") or a bare connection with no busy timeout ("bare").
# Prints "ready" before its first transaction, "holding" once its first row is written (app), then
# "locked <answers>" at the end.
WRITER = """
import sqlite3, sys, time
from sqlalchemy import text
path, count, hold, how, name = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), *sys.argv[4:6]
together = sys.argv[6:] == ["together"]  # after "ready", wait for the word to start
locked = 0
if how == "app":
    from gateway import create_app
    from gateway.extensions import db
    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
                      "REDIS_URL": None})
    with app.app_context():
        print("ready", flush=True)
        if together:
            sys.stdin.readline()
        for number in range(count):
            try:
                db.session.execute(text("SELECT count(*) FROM writes")).scalar()
                db.session.execute(text("INSERT INTO writes (writer) VALUES (:n)"), {"n": name})
                if number == 0:
                    print("holding", flush=True)
                time.sleep(hold)
                db.session.commit()
            except Exception as error:
                assert "locked" in str(error), error
                locked += 1
                db.session.rollback()
else:
    connection = sqlite3.connect(path, timeout=0)
    print("ready", flush=True)
    if together:
        sys.stdin.readline()
    for number in range(count):
        try:
            connection.execute("SELECT count(*) FROM writes").fetchone()
            connection.execute("INSERT INTO writes (writer) VALUES (?)", (name,))
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
    path = tmp_path / "writers.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE writes (id INTEGER PRIMARY KEY, writer TEXT)")
    connection.commit()
    connection.close()
    return path


def writer(database, count, hold, how="app", name="w", together=False):
    """A writer process running WRITER (`together`: it waits for start_together after "ready")."""
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database), str(count), str(hold), how, name]
        + (["together"] if together else []),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE if together else None,
        stdout=subprocess.PIPE,
        text=True,
    )


def start_together(processes):
    """Release writers started with `together` at once, each once it is ready: their transactions
    overlap however long each process took to start."""
    for process in processes:
        assert process.stdout.readline().strip() == "ready"
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    return processes


def locked_answers(process):
    """How many "database is locked" answers the writer met."""
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    return int(out.strip().splitlines()[-1].split()[1])


def rows(database):
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT count(*) FROM writes").fetchone()[0]


@pytest.mark.engine_independent
def test_four_processes_writing_through_the_app_never_meet_a_locked_database(database):
    # The control: the same load without a busy timeout collides.
    bare = start_together(
        [writer(database, 40, 0.002, how="bare", name=str(n), together=True) for n in range(4)]
    )
    assert sum(locked_answers(process) for process in bare) > 0
    before = rows(database)

    writers = start_together(
        [writer(database, 40, 0.002, name=str(n), together=True) for n in range(4)]
    )
    assert sum(locked_answers(process) for process in writers) == 0
    assert rows(database) - before == 160


@pytest.mark.engine_independent
def test_a_writer_killed_inside_its_transaction_does_not_block_the_next(database):
    holder = writer(database, 1, 3600)
    assert holder.stdout.readline().strip() == "ready"
    assert holder.stdout.readline().strip() == "holding"
    waiting = writer(database, 1, 0)
    assert waiting.stdout.readline().strip() == "ready"
    time.sleep(1)  # the waiter is in SQLite's busy handler now, well inside its busy_timeout
    assert waiting.poll() is None
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate(timeout=10)
    assert locked_answers(waiting) == 0
    assert rows(database) == 1  # the killed writer's row was never committed


def test_the_app_s_sqlite_connections_wait_for_the_write_lock(app):
    if db.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's settings")
    connection = db.engine.raw_connection()
    try:
        raw = connection.driver_connection
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
        assert raw.isolation_level == "IMMEDIATE"
    finally:
        connection.close()


@pytest.mark.engine_independent
def test_a_read_before_the_first_write_does_not_open_the_transaction(database):
    # The write lock is taken where the writing starts, not for a request's reads: a reader is
    # never held up by, nor holds up, a writer.
    uri = f"sqlite:///{database}"
    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": uri, "REDIS_URL": None})
    with app.app_context():
        db.session.execute(text("SELECT count(*) FROM writes")).scalar()
        raw = db.session.connection().connection.driver_connection
        assert not raw.in_transaction
        db.session.execute(text("INSERT INTO writes (writer) VALUES ('x')"))
        assert raw.in_transaction
        db.session.commit()
        db.session.remove()
        db.engine.dispose()
    assert rows(database) == 1
