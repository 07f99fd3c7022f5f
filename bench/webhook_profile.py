"""Webhook delivery in one process: what one delivery costs in SQL statements, Redis round trips and
CPU.

Run: `.venv/bin/python bench/webhook_profile.py --redis-url redis://127.0.0.1:6379/4 [--count 500]
      [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/gw_bench] [--profile]`
(the Redis database is flushed and the SQL database emptied first.) Payments are completed here,
then the worker of `flask gateway worker` (GatewayWorker, burst mode) drains their deliveries in
this same process to a local receiver that verifies every signature. Printed: deliveries per
second of the drain, SQL statements per delivery by kind, Redis round trips per delivery (and per
completion, to wake it), and with --profile the pyinstrument call tree of the drain (the top frames
say where a delivery's time goes).
Unlike bench/webhooks.py this needs no quiet machine: the counts do not depend on the load.
"""

import argparse
import collections
import sys
import tempfile
import threading
import time
from pathlib import Path

from redis import Connection, Redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.webhooks import Receiver, complete_payments  # noqa: E402


class RoundTrips:
    """Counts what every Redis connection of this process sends: one send is one round trip (a
    pipeline is one), whichever client (RQ's worker, the gateway's queues) sends it."""

    sent = 0
    trips = collections.Counter()  # each round trip's commands: "EVALSHA", "MULTI ZREM … EXEC"

    @classmethod
    def install(cls):
        send = Connection.send_packed_command

        def counted(self, command, check_health=True):
            cls.sent += 1
            cls.trips.update([" ".join(cls.names(command))])
            return send(self, command, check_health)

        Connection.send_packed_command = counted

    @staticmethod
    def names(command):
        """The command names in a packed command (RESP arrays: *n, then $len and the name first)."""
        data = b"".join(command) if isinstance(command, (list, tuple)) else bytes(command)
        found, lines = [], data.split(b"\r\n")
        for index, line in enumerate(lines[:-2]):
            if line.startswith(b"*") and lines[index + 1].startswith(b"$"):
                found.append(lines[index + 2].decode(errors="replace").upper())
        return found


def statement_kind(statement):
    """The first words of an SQL statement: what it does and to which table."""
    words = statement.split()
    if not words:
        return "?"
    verb = words[0].upper()
    if verb == "SELECT":
        table = next((words[i + 1] for i, w in enumerate(words[:-1]) if w.upper() == "FROM"), "?")
        return f"SELECT FROM {table}"
    if verb in ("INSERT", "DELETE"):
        return f"{verb} {words[2] if len(words) > 2 else '?'}"
    if verb == "UPDATE":
        return f"UPDATE {words[1] if len(words) > 1 else '?'}"
    return verb


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--profile", action="store_true", help="print pyinstrument's call tree")
    parser.add_argument("--html", default=None, help="also write the profile as HTML here")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="gateway-webhook-profile-"))
    database_url = args.database_url or f"sqlite:///{workdir / 'profile.sqlite3'}"
    if database_url.startswith("postgresql"):
        from bench.databases import ensure_database

        ensure_database(database_url)

    from rq import Queue
    from sqlalchemy import event

    from gateway import create_app
    from gateway.accounts.models.brand import Brand
    from gateway.extensions import db
    from gateway.jobs import WEBHOOKS
    from gateway.jobs.rq_worker import GatewayWorker

    Redis.from_url(args.redis_url).flushdb()
    app = create_app(
        {
            "APP_ENV": "development",
            "SQLALCHEMY_DATABASE_URI": database_url,
            "REDIS_URL": args.redis_url,
        }
    )
    import logging

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    logging.getLogger("rq.worker").setLevel(logging.WARNING)
    with app.app_context():
        db.drop_all()
        db.create_all()
        brand = Brand(name="Bench Shop", slug="bench")
        db.session.add(brand)
        db.session.commit()
        receiver = Receiver(brand.webhook_secret)
        RoundTrips.install()
        complete_payments(brand, receiver.url, args.count)
        db.session.remove()
        waking, waking_trips = RoundTrips.sent, RoundTrips.trips.copy()
        RoundTrips.sent, RoundTrips.trips = 0, collections.Counter()

        statements = collections.Counter()
        event.listen(
            db.engine,
            "before_cursor_execute",
            lambda conn, cursor, statement, *rest: statements.update([statement_kind(statement)]),
        )
        event.listen(db.engine, "commit", lambda conn: statements.update(["COMMIT"]))
        event.listen(db.engine, "rollback", lambda conn: statements.update(["ROLLBACK"]))
        connection = Redis.from_url(args.redis_url)
        worker = GatewayWorker(
            [Queue(WEBHOOKS, connection=connection)],
            connection=connection,
            stopping=threading.Event(),
        )
        profiler = None
        if args.profile or args.html:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005)
            profiler.start()
        started, cpu_started = time.perf_counter(), time.thread_time()
        worker.work(burst=True, logging_level="WARNING")
        seconds, cpu = time.perf_counter() - started, time.thread_time() - cpu_started
        if profiler is not None:
            profiler.stop()
        receiver.wait_for(args.count, 30)

    delivered = len(receiver.arrivals)
    print(f"database: {'PostgreSQL' if database_url.startswith('postgresql') else 'SQLite'}")
    print(
        f"{delivered}/{args.count} delivered in {seconds:.2f} s: "
        f"{delivered / seconds:.0f}/s in one "
        f"process; bad signatures {receiver.bad}"
    )
    # The worker's own CPU (this thread's, not the receiver's): steadier than the rate on a busy
    # machine.
    print(f"worker CPU per delivery: {cpu / max(delivered, 1) * 1000:.2f} ms")
    sent = sum(count for kind, count in statements.items() if kind not in ("COMMIT", "ROLLBACK"))
    print(f"SQL statements per delivery: {sent / max(delivered, 1):.2f} (and commits, rollbacks)")
    for kind, count in statements.most_common():
        print(f"  {count / max(delivered, 1):5.2f}  {kind}")
    print(f"Redis round trips per delivery: {RoundTrips.sent / max(delivered, 1):.2f}")
    for trip, count in RoundTrips.trips.most_common(25):
        print(f"  {count / max(delivered, 1):5.2f}  {trip[:150]}")
    # The other side of a delivery's Redis cost: its wake-up, sent by the completing process.
    print(f"Redis round trips per completion, to wake its delivery: {waking / args.count:.2f}")
    for trip, count in waking_trips.most_common(5):
        print(f"  {count / args.count:5.2f}  {trip[:150]}")
    if profiler is not None:
        print(profiler.output_text(unicode=True, color=False, show_all=False))
        if args.html:
            Path(args.html).write_text(profiler.output_html())


if __name__ == "__main__":
    main()
