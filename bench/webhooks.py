"""Webhook benchmark: complete_payment → a local receiver's verified receipt, through one real RQ
worker.

Run: `.venv/bin/python bench/webhooks.py --redis-url redis://127.0.0.1:6379/4 [--count 500]
      [--workers 1] [--receiver-ms 0]
      [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/gw_bench]`
(SQLite in a temporary file by default; a given PostgreSQL database is created if missing and
emptied first. The given Redis database is flushed first: give one nothing else uses.) Payments are
completed by direct service calls in this process; --workers `flask gateway worker` subprocesses
deliver to a receiver here that checks every signature.

Figures: latency (p50, p99) from complete_payment to verified receipt, completions paced at
--rate per second; then deliveries per second of the workers together and per worker, draining
--count deliveries that were queued while they were suspended. Targets (issue 17): p99 under
100 ms; at least 200 deliveries/s per worker on SQLite and 150/s on PostgreSQL; it exits non-zero
on a miss or any bad signature.
"""

import argparse
import hashlib
import hmac
import json
import logging
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from redis import Redis
from rq.suspension import resume, suspend
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import processes  # noqa: E402


class Receiver:
    """A local endpoint answering 200 that verifies each signature and notes when it arrived."""

    def __init__(self, secret, delay=0.0):
        self.secret, self.arrivals, self.bad = secret.encode(), {}, 0
        self.delay = delay  # seconds each answer takes: a receiver doing work of its own
        self.done = threading.Condition()
        self.server = make_server("127.0.0.1", 0, self.wsgi, threaded=True)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks"

    def wsgi(self, environ, start_response):
        if self.delay:
            time.sleep(self.delay)
        request = Request(environ)
        raw = request.get_data()
        expected = hmac.new(self.secret, raw, hashlib.sha256).hexdigest()
        fresh = abs(time.time() - int(request.headers.get("X-Service-Timestamp", "0"))) <= 300
        if not (
            hmac.compare_digest(expected, request.headers.get("X-Service-Signature", "")) and fresh
        ):
            self.bad += 1
            return Response("bad", status=401)(environ, start_response)
        with self.done:
            self.arrivals.setdefault(json.loads(raw)["data"]["payment_id"], time.time())
            self.done.notify_all()
        return Response("OK")(environ, start_response)

    def wait_for(self, count, timeout):
        with self.done:
            return self.done.wait_for(lambda: len(self.arrivals) >= count, timeout)


def start_worker(database_url, redis_url, log_path, log_level):
    """`flask gateway worker` on the bench database and Redis, in its own process group (stopped at
    exit).
    """
    env = {
        **os.environ,
        "APP_ENV": "development",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "FLASK_APP": "app.py",
        "PYTHONPATH": str(ROOT),
    }
    with open(log_path, "wb") as log:
        return processes.start(
            [sys.executable, "-m", "flask", "gateway", "worker", "--log-level", log_level],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def complete_payments(brand, url, count, rate=None):
    """Create and complete `count` payments; returns {payment_id: time complete_payment was
    called}."""
    from gateway.payments.lifecycle import complete_payment, create_payment

    started = {}
    for number in range(count):
        payment = create_payment(
            brand,
            {"amount": 500, "currency": "BDT", "callback_url": url, "reference": f"bench-{number}"},
        )
        started[payment.public_id] = time.time()
        complete_payment(payment, provider="bkash", provider_trx_id=f"BENCH{number}")
        if rate:
            time.sleep(max(0.0, started[payment.public_id] + 1 / rate - time.time()))
    return started


def cpu_seconds(process):
    """CPU time (user + system) the process has used so far, from /proc; None where there is
    none."""
    try:
        fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, share):
    return (
        statistics.quantiles(values, n=100, method="inclusive")[share - 1]
        if len(values) > 1
        else values[0]
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument(
        "--rate", type=float, default=50.0, help="completions per second in the latency run"
    )
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--workers", type=int, default=1, help="RQ worker processes")
    parser.add_argument(
        "--receiver-ms",
        type=float,
        default=0.0,
        help="milliseconds the receiver takes to answer: workers then wait on it, not on the CPU "
        "(how workers scale on a machine too small to run them and the receiver side by side)",
    )
    parser.add_argument(
        "--log-level", default="INFO", help="the worker's log level (INFO logs 3 lines per job)"
    )
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL"), required=not os.environ.get("REDIS_URL")
    )
    args = parser.parse_args()
    processes.exit_on_signals()
    workdir = Path(tempfile.mkdtemp(prefix="gateway-webhook-bench-"))
    database_url = args.database_url or f"sqlite:///{workdir / 'bench.sqlite3'}"
    if database_url.startswith("postgresql"):
        from bench.databases import ensure_database

        ensure_database(database_url)

    from gateway import create_app
    from gateway.accounts.models.brand import Brand
    from gateway.extensions import db

    app = create_app(
        {
            "APP_ENV": "development",
            "SQLALCHEMY_DATABASE_URI": database_url,
            "REDIS_URL": args.redis_url,
        }
    )
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the receiver's access log
    redis = Redis.from_url(args.redis_url)
    # no queued job, worker record, wake-up key or host share left by an earlier run
    redis.flushdb()
    with app.app_context():
        db.drop_all()
        db.create_all()
        brand = Brand(name="Bench Shop", slug="bench")
        db.session.add(brand)
        db.session.commit()
        receiver = Receiver(brand.webhook_secret, args.receiver_ms / 1000)
        workers = [
            start_worker(database_url, args.redis_url, workdir / f"worker{n}.log", args.log_level)
            for n in range(args.workers)
        ]
        try:
            time.sleep(3)  # let the worker start before timing anything
            started = complete_payments(brand, receiver.url, args.count, args.rate)
            receiver.wait_for(args.count, 120)
            latencies = [
                receiver.arrivals[pid] - t for pid, t in started.items() if pid in receiver.arrivals
            ]
            if not latencies:
                raise SystemExit(f"Nothing was delivered; see {workdir / 'worker0.log'}")

            suspend(redis)
            time.sleep(1.5)  # the worker notices the suspension between jobs
            receiver.arrivals.clear()
            complete_payments(brand, receiver.url, args.count)
            resumed, cpu_before = time.time(), [cpu_seconds(worker) for worker in workers]
            resume(redis)
            receiver.wait_for(args.count, 300)
            cpu_after = [cpu_seconds(worker) for worker in workers]
            # A worker blocked on an empty queue takes one job before it notices the suspension.
            times = sorted(t for t in receiver.arrivals.values() if t >= resumed)
            throughput = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0
        finally:
            resume(redis)
            for worker in workers:
                processes.signal_group(worker, signal.SIGTERM)  # all finish their jobs at once
            for worker in workers:
                processes.stop(worker, grace=30)

    postgres = database_url.startswith("postgresql")
    engine = "PostgreSQL" if postgres else "SQLite (WAL, file)"
    p50, p99 = percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000
    per_worker = throughput / args.workers
    rate_target = 150 if postgres else 200
    print(f"\ncommand: {shlex.join([sys.executable, *sys.argv])}")
    print(
        f"database: {engine}; {args.workers} RQ worker process(es) (SimpleWorker, log level "
        f"{args.log_level}); the receiver verifies every signature"
    )
    print(
        f"latency complete_payment → verified receipt, {len(latencies)}/{args.count} delivered at "
        f"{args.rate:g}/s: p50 {p50:.1f} ms, p99 {p99:.1f} ms"
    )
    print(
        f"throughput: {throughput:.0f} deliveries/s over {len(times)} queued deliveries, "
        f"{per_worker:.0f}/s per worker process"
    )
    if None not in cpu_before + cpu_after:
        # Steadier than the rate on a shared machine: what each delivery cost the workers in CPU.
        used = sum(cpu_after) - sum(cpu_before)
        print(f"worker CPU per delivery in the drain: {used / max(len(times), 1) * 1000:.2f} ms")
    print(f"bad signatures seen by the receiver: {receiver.bad}")
    missed = []
    for label, met in (
        (f"p99 {p99:.1f} ms (< 100 ms)", p99 < 100),
        (
            f"{per_worker:.0f} deliveries/s per worker (>= {rate_target}/s)",
            per_worker >= rate_target,
        ),
        (f"{receiver.bad} bad signatures (none)", receiver.bad == 0),
        (f"{len(latencies)}/{args.count} delivered (all)", len(latencies) == args.count),
    ):
        print(f"target {label}: {'met' if met else 'MISSED'}")
        missed += [label] * (not met)
    shutil.rmtree(workdir, ignore_errors=True)
    if missed:
        raise SystemExit("benchmark missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
