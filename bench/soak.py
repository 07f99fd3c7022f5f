"""Soak benchmark: 80% of a capacity measured first, for N minutes, payments completing and webhooks
flowing.

Run: `.venv/bin/python bench/soak.py [--minutes 10] [--database-url postgresql+psycopg://…/gw_soak]`
(the database, created if missing, is emptied first). Everything is started here on loopback: a
redis-server of its own, gunicorn (3 workers, APP_ENV=production), two `flask gateway worker`s and a
receiver that verifies every signature. Each payment is made as in life, over HTTP: the merchant's
POST /payments, the customer's checkout page and TrxID form, the phone forwarding the bKash SMS to
the ingest endpoint; that SMS completes the payment and its webhook goes out through the workers.

First the capacity: payments per second with --threads customers back to back for --measure seconds.
Then the soak: payments due at 80% of that rate. Printed per minute: payments, how many started over
1 s late (the gateway falling behind), errors, p50/p99 of a whole payment (four requests, timed from
when it was due) and of single requests, the webhook backlog (deliveries not yet
sent) and the webhooks received; and the resident memory of every gunicorn and RQ worker process at
start and end. Exits 1 on any error: a 5xx or failed request, a webhook that failed verification, or
a payment not completed or webhook not delivered when the run ends.
"""

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from bench import processes  # noqa: E402
from bench.databases import ensure_database  # noqa: E402
from tests.faults.harness import STACK_SECRET, Gunicorn, Shop, Workers, wait_until  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402
from tests.webhook_support import WebhookReceiver  # noqa: E402

DEFAULT_DATABASE = "postgresql+psycopg://postgres@127.0.0.1:5432/gw_soak"
DRAIN = 120  # seconds the end of the run waits for the last webhooks


def percentile(values, share):
    """The share-th percentile (1-99) of values, or None for none."""
    if not values:
        return None
    return (
        statistics.quantiles(values, n=100, method="inclusive")[share - 1]
        if len(values) > 1
        else values[0]
    )


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def prepare(database_url):
    """Empty the database; a brand, an API key, a bKash number and a pairing code. Returns (app,
    brand id, key, method id, pairing code, webhook secret)."""
    from gateway import create_app
    from gateway.accounts.api_keys import generate_key
    from gateway.accounts.models.brand import Brand
    from gateway.devices.pairing import create_pairing_code
    from gateway.extensions import db
    from gateway.payments.models.payment_method import PaymentMethod

    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": database_url,
            "REDIS_URL": None,
            "SECRET_KEY": STACK_SECRET,
        }
    )
    with app.app_context():
        db.drop_all()
        db.create_all()
        brand = Brand(name="Soak Shop", slug="soak-shop", currencies="BDT")
        db.session.add(brand)
        db.session.commit()
        _, key = generate_key(brand, "soak", ["read", "write"])
        method = PaymentMethod(brand_id=brand.id, provider="bkash", number="01712345678")
        db.session.add(method)
        db.session.commit()
        return app, brand.id, key, method.id, create_pairing_code(brand), brand.webhook_secret


def backlog(app):
    """Deliveries not yet sent (pending), and those that failed for good."""
    from gateway.extensions import db
    from gateway.webhooks.models.webhook import WebhookDelivery

    with app.app_context():
        rows = dict(
            db.session.execute(
                db.select(WebhookDelivery.status, db.func.count()).group_by(WebhookDelivery.status)
            ).all()
        )
        db.session.remove()
    return rows.get("pending", 0), rows.get("failed", 0)


def unfinished_payments(app, payment_ids):
    """How many of the payments are not completed."""
    from gateway.extensions import db
    from gateway.payments.models.payment import Payment

    with app.app_context():
        done = db.session.execute(
            db.select(db.func.count())
            .select_from(Payment)
            .where(Payment.public_id.in_(payment_ids), Payment.status == "completed")
        ).scalar_one()
        db.session.remove()
    return len(payment_ids) - done


def rss_kb(pid):
    """Resident memory of a process in KiB (from /proc), or None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def descendants(pid):
    """The pids of every descendant of `pid` (gunicorn's workers; RQ's scheduler child)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            children = []
        found += [int(child) for child in children]
        todo += [int(child) for child in children]
    return found


def memory(gunicorn, workers):
    """{process name: RSS KiB} of gunicorn's master and workers and of each RQ worker (and its
    children).
    """
    sizes = {"gunicorn master": rss_kb(gunicorn.process.pid)}
    for index, pid in enumerate(sorted(descendants(gunicorn.process.pid))):
        sizes[f"gunicorn worker {index + 1}"] = rss_kb(pid)
    for index, process in enumerate(workers.processes):
        sizes[f"rq worker {index + 1}"] = rss_kb(process.pid)
        for child in descendants(process.pid):  # RQ's scheduler, forked once the worker is up
            sizes[f"rq worker {index + 1} scheduler"] = rss_kb(child)
    return sizes


class Load:
    """Payments started at a steady rate (or back to back), their results kept per minute."""

    def __init__(self, shop, threads):
        self.shop, self.pool = shop, ThreadPoolExecutor(threads)
        # (monotonic time it was due, seconds from then to its end, payment id or None, error or
        # None, seconds it waited for a free customer): timed from when it was due, so a gateway
        # falling behind shows in the figures
        self.flows = []
        self.lock = threading.Lock()

    def one(self, reference, due=None):
        started = time.monotonic()
        due = started if due is None else due
        try:
            payment_id, error = self.shop.pay(reference), None
        except Exception as failure:  # noqa: BLE001 - every failure is an error of the run
            payment_id, error = None, str(failure)[:200]
        with self.lock:
            self.flows.append((due, time.monotonic() - due, payment_id, error, started - due))

    def back_to_back(self, seconds, threads):
        """Closed loop: `threads` customers paying one after another for `seconds`; payments per
        second.
        """
        stop = time.monotonic() + seconds
        count = [0]

        def customer():
            while time.monotonic() < stop:
                self.one(f"measure-{uuid.uuid4().hex[:12]}")
                with self.lock:
                    count[0] += 1

        running = [threading.Thread(target=customer) for _ in range(threads)]
        for thread in running:
            thread.start()
        for thread in running:
            thread.join()
        return count[0] / seconds

    def paced(self, rate, seconds, tick):
        """Open loop: start a payment every 1/rate s for `seconds`; `tick(minute)` at each minute's
        end.
        """
        started = time.monotonic()
        next_start, sent, minute = started, 0, 0
        while next_start < started + seconds:
            delay = next_start - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.pool.submit(self.one, f"soak-{sent}-{uuid.uuid4().hex[:8]}", next_start)
            sent += 1
            next_start = started + sent / rate
            if next_start >= started + (minute + 1) * 60:
                minute += 1
                tick(minute)
        self.pool.shutdown(wait=True)
        return sent


def minute_report(load, shop, app, receiver, minute, since, rows):
    """One line of figures for the minute that began at `since` (monotonic)."""
    until = since + 60
    flows = [flow for flow in load.flows if since <= flow[0] < until]
    answers = [answer for answer in shop.answers if since <= answer[4] < until]
    errors = sum(1 for flow in flows if flow[3]) + sum(
        1 for answer in answers if answer[2] is None or answer[2] >= 500
    )
    waiting, failed = backlog(app)
    flow_times, request_times = [flow[1] for flow in flows], [answer[3] for answer in answers]
    late = sum(1 for flow in flows if flow[4] > 1)
    rows.append(
        (
            minute,
            len(flows),
            errors,
            percentile(flow_times, 50),
            percentile(flow_times, 99),
            percentile(request_times, 50),
            percentile(request_times, 99),
            waiting,
            failed,
            len(receiver.received),
            late,
        )
    )
    row = rows[-1]
    print(
        f"{row[0]:>6} {row[1]:>9} {row[10]:>5} {row[2]:>6} {ms(row[3]):>9} {ms(row[4]):>9} "
        f"{ms(row[5]):>8} {ms(row[6]):>8} {row[7]:>8} {row[8]:>7} {row[9]:>9}",
        flush=True,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--minutes", type=float, default=10, help="length of the soak (after the measurement)"
    )
    parser.add_argument(
        "--measure", type=float, default=20, help="seconds of the capacity measurement"
    )
    parser.add_argument(
        "--threads", type=int, default=6, help="customers paying at once while measuring"
    )
    parser.add_argument(
        "--share", type=float, default=0.8, help="share of the measured capacity to soak at"
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=None,
        help="payments/s to soak at instead (a shared machine's capacity moves under the run)",
    )
    parser.add_argument(
        "--database-url", default=os.environ.get("SOAK_DATABASE_URL", DEFAULT_DATABASE)
    )
    args = parser.parse_args()
    # a stopped soak stops its servers and workers too (the finally below)
    processes.exit_on_signals()

    ensure_database(args.database_url)
    app, brand_id, api_key, method_id, pairing_code, secret = prepare(args.database_url)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the receiver's line per webhook
    directory = Path(tempfile.mkdtemp(prefix="gw-soak-"))
    redis = gunicorn = workers = None
    receiver = WebhookReceiver(secret)
    try:
        redis = RedisServer().start()
        processes.adopt(redis.process)
        gunicorn = Gunicorn(directory, args.database_url, redis.url)
        # Each leads a process group of its own (the harness's Process).
        processes.adopt(gunicorn.process.popen)
        workers = Workers(directory, args.database_url, redis.url, gunicorn.url)
        for worker in workers.start(2):
            processes.adopt(worker.popen)
        device = requests.post(
            f"{gunicorn.url}/api/mobile/v1/devices",
            timeout=10,
            json={
                "pairing_code": pairing_code,
                "device_id": uuid.uuid4().hex,
                "device_name": "Soak phone",
                "fingerprint": "install-1",
                "app_version": "1.0.0",
                "platform": "android",
            },
        ).json()["data"]
        shop = Shop(
            gunicorn.url,
            api_key,
            method_id,
            device["aes_key"],
            device["access_token"],
            receiver.url,
            retries=1,
        )
        wait_until(
            lambda: all(descendants(process.pid) for process in workers.processes), 20
        )  # schedulers up
        start_memory = memory(gunicorn, workers)

        measure = Load(shop, args.threads)
        capacity = measure.back_to_back(args.measure, args.threads)
        rate = args.rate or capacity * args.share
        print(
            f"capacity: {capacity:.1f} payments/s ({args.threads} customers back to back, "
            f"{args.measure:.0f} s); "
            f"soaking at {rate:.1f}/s ({rate / capacity:.0%}) for {args.minutes:g} min",
            flush=True,
        )
        print(
            f"{'minute':>6} {'payments':>9} {'late':>5} {'errors':>6} {'p50 pay':>9} "
            f"{'p99 pay':>9} {'p50 req':>8} "
            f"{'p99 req':>8} {'backlog':>8} {'failed':>7} {'webhooks':>9}   (ms; a payment "
            "is timed from when it was due,"  # noqa: E501
            " late = started over 1 s after)",
            flush=True,
        )
        soak = Load(
            shop, max(8, int(rate * 4) + 4)
        )  # enough customers that the pace, not the pool, sets the load
        rows, began = [], time.monotonic()
        soak.paced(
            rate,
            args.minutes * 60,
            lambda minute: minute_report(
                soak, shop, app, receiver, minute, began + (minute - 1) * 60, rows
            ),
        )
        if args.minutes * 60 % 60:
            minute_report(soak, shop, app, receiver, len(rows) + 1, began + len(rows) * 60, rows)

        paid = [flow[2] for flow in measure.flows + soak.flows if flow[2]]
        drained = wait_until(
            lambda: backlog(app)[0] == 0 and unfinished_payments(app, paid) == 0, DRAIN, pause=1
        )
        end_memory = memory(gunicorn, workers)
        unfinished, (waiting, failed) = unfinished_payments(app, paid), backlog(app)
        delivered = {hit["json"]["data"].get("payment_id") for hit in list(receiver.received)}
        lost = len(set(paid) - delivered)

        print("\nmemory (RSS, MiB)        start      end")
        for name in sorted(set(start_memory) | set(end_memory)):
            before, after = start_memory.get(name), end_memory.get(name)
            print(
                f"  {name:<22} {before / 1024 if before else 0:>6.1f} "
                f"{after / 1024 if after else 0:>8.1f}"
            )
        flow_errors = [flow[3] for flow in measure.flows + soak.flows if flow[3]]
        server_errors = shop.server_errors()
        print(
            f"\npayments: {len(paid)} completed of {len(measure.flows) + len(soak.flows)} started; "
            f"request errors (5xx or none): {len(server_errors)}; payment flows failed: "
            f"{len(flow_errors)}; "
            f"not completed: {unfinished}; webhooks not delivered: {lost} (backlog "
            f"{waiting}, failed {failed}); "
            f"bad signatures: {len(receiver.rejected)}; drained: {drained}"
        )
        for error in flow_errors[:5]:
            print("  error:", error)
        ok = not (server_errors or flow_errors or unfinished or lost or failed or receiver.rejected)
        print("OK: 0 errors" if ok else "FAILED")
        return 0 if ok else 1
    finally:
        for part in (workers, gunicorn):
            if part is not None:
                part.stop()
        if redis is not None:
            redis.kill()
        receiver.close()


if __name__ == "__main__":
    sys.exit(main())
