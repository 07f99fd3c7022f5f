"""SQLite writers under contention: several processes committing through the app's engine at once.

Run: `.venv/bin/python bench/sqlite_writers.py [--processes 4] [--seconds 10] [--hold-ms 1]`

Each process builds the app on one SQLite file (its engine settings: WAL, busy_timeout, BEGIN
IMMEDIATE; gateway.tune_sqlite) and, for --seconds, runs write transactions as a request does: a
read, an INSERT, --hold-ms of work with the write lock held, the commit; back to back, or paced
at --rate per process. It prints the
transactions per second of all processes together, the latency of a transaction (p50, p99, max)
and how many failed ("database is locked"); run it on two checkouts to compare their settings.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WRITER = """
import json, sys, time
from sqlalchemy import text
from gateway import create_app
from gateway.extensions import db
path, hold, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
                  "REDIS_URL": None})
latencies, errors = [], 0
with app.app_context():
    db.session.execute(text("SELECT 1"))
    print("ready", flush=True)
    until = float(sys.stdin.readline())  # every process built and connected: start together
    due = time.perf_counter()
    while time.time() < until:
        if rate:  # paced: one transaction every 1/rate s, as requests arriving
            due += 1 / rate
            time.sleep(max(due - time.perf_counter(), 0))
        started = time.perf_counter()
        try:
            db.session.execute(text("SELECT count(*) FROM writes WHERE id < 10")).scalar()
            db.session.execute(text("INSERT INTO writes (writer) VALUES ('w')"))
            end = time.perf_counter() + hold
            while time.perf_counter() < end:
                pass  # work done with the write lock held, as a request's ORM code does
            db.session.commit()
        except Exception as error:  # noqa: BLE001 - counted
            assert "locked" in str(error), error
            errors += 1
            db.session.rollback()
            continue
        latencies.append(time.perf_counter() - started)
print(json.dumps({"latencies": latencies, "errors": errors}))
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--hold-ms", type=float, default=1.0)
    parser.add_argument(
        "--rate", type=float, default=0, help="transactions/s per process (0: as fast as it can)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "writers.sqlite3")
        import sqlite3

        with sqlite3.connect(path) as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("CREATE TABLE writes (id INTEGER PRIMARY KEY, writer TEXT)")
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, path]
                + [str(options.hold_ms / 1000), str(options.rate)],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for _ in range(options.processes)
        ]
        for process in processes:
            assert process.stdout.readline().strip() == "ready"
        until = time.time() + options.seconds
        for process in processes:
            process.stdin.write(f"{until}\n")
            process.stdin.close()
        results = [json.loads(process.stdout.read()) for process in processes]
        for process in processes:
            process.wait()
    latencies = sorted(ms * 1000 for result in results for ms in result["latencies"])
    errors = sum(result["errors"] for result in results)
    if not latencies:
        raise SystemExit("no transaction committed")
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"command: {' '.join([sys.executable, *sys.argv])}")
    print(
        f"{len(latencies) / options.seconds:.0f} write transactions/s from {options.processes} "
        f"processes; latency p50 {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, "
        f"max {latencies[-1]:.1f} ms; failed (locked): {errors}"
    )


if __name__ == "__main__":
    main()
