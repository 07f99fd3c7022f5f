"""`flask gateway backup`: a consistent online copy of a live SQLite database, and pg_dump advice on
PostgreSQL.
"""

import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from gateway import create_app
from gateway.accounts.models.brand import Brand
from gateway.extensions import db

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def sqlite_app(tmp_path):
    """An application on a SQLite file of its own (whatever engine the suite runs), with one
    brand."""
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'live.sqlite3'}",
            "REDIS_URL": None,
            "SQLALCHEMY_ENGINE_OPTIONS": {},
        }
    )
    with app.app_context():
        db.create_all()
        db.session.add(Brand(name="Shop", slug="default"))
        db.session.commit()
        db.session.remove()
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture
def writer(sqlite_app):
    """A second process creating payments in the live database until the test stops it."""
    url = sqlite_app.config["SQLALCHEMY_DATABASE_URI"]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.backup_writer", url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    yield process
    if process.poll() is None:
        process.kill()
    process.wait(10)
    process.stdout.close()
    process.stderr.close()


def invoke(app, *args):
    """Run `flask gateway …` against `app` (the suite's own app context would otherwise win)."""
    with app.app_context():
        return app.test_cli_runner().invoke(args=["gateway", *args])


def payment_rows(path):
    """Every payment of a SQLite file with its customer's e-mail, by id: what a restore must bring
    back.
    """
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute(
            "SELECT p.id, p.reference, p.amount, p.status, c.email FROM payments p "
            "LEFT JOIN customers c ON c.id = p.customer_id ORDER BY p.id"
        ).fetchall()


def committed_count(path):
    with closing(sqlite3.connect(path, timeout=10)) as connection:
        return connection.execute("SELECT count(*) FROM payments").fetchone()[0]


def wait_for_rows(path, at_least, process):
    """Wait until the writer has committed `at_least` payments (it reports each)."""
    for line in process.stdout:
        if int(line) >= at_least:
            return
    pytest.fail(f"the writer stopped: {process.stderr.read()}")


def test_backup_of_a_live_database_under_writes_holds_exactly_the_committed_rows_and_restores(
    sqlite_app, writer, tmp_path
):
    live = tmp_path / "live.sqlite3"
    target = tmp_path / "backup.sqlite3"
    wait_for_rows(live, 30, writer)

    before = committed_count(live)
    result = invoke(sqlite_app, "backup", str(target))
    after = committed_count(live)
    wait_for_rows(live, after + 30, writer)  # the writer carried on after the backup
    writer.kill()
    writer.wait(10)

    assert result.exit_code == 0, result.output
    assert "SECRET_KEY" in result.output
    with closing(sqlite3.connect(target)) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    backed_up = payment_rows(target)
    # A snapshot: the first N transactions, whole (each payment with its customer), nothing later,
    # no gap.
    assert before <= len(backed_up) <= after
    assert [row[1] for row in backed_up] == [f"REF-{n}" for n in range(1, len(backed_up) + 1)]
    assert all(row[4] == f"c{n}@shop.example" for n, row in enumerate(backed_up, start=1))
    with closing(sqlite3.connect(target)) as copy:
        assert copy.execute("SELECT count(*) FROM customers").fetchone()[0] == len(backed_up)
    live_rows = payment_rows(live)
    assert len(live_rows) > len(backed_up) and live_rows[: len(backed_up)] == backed_up

    # Restore as the command says: the processes stopped, the -wal and -shm gone, the copy put back.
    with sqlite_app.app_context():
        db.engine.dispose()
    for leftover in (tmp_path / "live.sqlite3-wal", tmp_path / "live.sqlite3-shm"):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(target, live)
    assert payment_rows(live) == backed_up
    with sqlite_app.app_context():
        from gateway.payments.lifecycle import create_payment

        brand = db.session.execute(db.select(Brand)).scalar_one()
        create_payment(brand, {"amount": 1, "currency": "BDT", "reference": "after-restore"})
    assert [row[1] for row in payment_rows(live)] == [row[1] for row in backed_up] + [
        "after-restore"
    ]


def test_backup_refuses_to_overwrite_without_force(sqlite_app, tmp_path):
    target = tmp_path / "backup.sqlite3"
    target.write_bytes(b"an older backup")
    refused = invoke(sqlite_app, "backup", str(target))

    assert refused.exit_code != 0 and "--force" in refused.output
    assert target.read_bytes() == b"an older backup"
    forced = invoke(sqlite_app, "backup", str(target), "--force")
    assert forced.exit_code == 0, forced.output
    with closing(sqlite3.connect(target)) as copy:
        assert copy.execute("SELECT name FROM brands").fetchall() == [("Shop",)]
    assert not list(tmp_path.glob(".backup.sqlite3.partial-*"))


def test_backup_onto_the_live_database_itself_is_refused(sqlite_app, tmp_path):
    result = invoke(sqlite_app, "backup", str(tmp_path / "live.sqlite3"), "--force")

    assert result.exit_code != 0 and "live database" in result.output
    assert payment_rows(tmp_path / "live.sqlite3") == []


def test_backup_on_postgresql_prints_the_pg_dump_command_and_fails(tmp_path):
    app = create_app(
        {
            "APP_ENV": "testing",
            "REDIS_URL": None,
            "SQLALCHEMY_DATABASE_URI": "postgresql+psycopg://gateway:s3cret-pass@db.internal:5433/shop",
        }
    )
    target = tmp_path / "shop.dump"

    result = invoke(app, "backup", str(target))

    assert result.exit_code != 0
    assert (
        f"pg_dump --format=custom --file {target} postgresql://gateway@db.internal:5433/shop"
        in result.output
    )
    assert "s3cret-pass" not in result.output
    assert "SECRET_KEY" in result.output and "pg_restore" in result.output
    assert not target.exists()


def test_backup_to_an_empty_path_asks_for_one(sqlite_app, tmp_path):
    result = invoke(sqlite_app, "backup", "")

    assert result.exit_code == 2
    assert "give the backup file's path" in result.output and "exists" not in result.output


def test_backup_into_a_folder_it_cannot_write_is_refused_with_the_folder_named(sqlite_app):
    # /proc takes no new file, whoever asks (root included, whom no mode bit stops).
    result = invoke(sqlite_app, "backup", "/proc/backup.sqlite3")

    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert "Error: " in result.output and "/proc" in result.output
    assert not Path("/proc/backup.sqlite3").exists()


def test_a_copy_that_fails_is_the_commands_refusal_and_leaves_no_partial_file(sqlite_app, tmp_path):
    with sqlite_app.app_context():
        db.engine.dispose()
    (tmp_path / "live.sqlite3").write_bytes(b"not a SQLite database at all " * 200)
    target = tmp_path / "backup.sqlite3"

    result = invoke(sqlite_app, "backup", str(target))

    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert f"The backup to {target} failed: file is not a database." in result.output
    assert not target.exists() and not list(tmp_path.glob(".backup.sqlite3.partial-*"))
