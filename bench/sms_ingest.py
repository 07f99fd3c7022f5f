"""SMS benchmark: ingestion in batches of 50 (messages/s), and the cost of matching one SMS as open
payments grow.

Run: `.venv/bin/python bench/sms_ingest.py [--database-url URL] [--batches 20] [--trials 100]`
(default: a fresh SQLite file; pass a PostgreSQL URL to measure there — its tables are dropped and
rebuilt).

Ingestion goes through POST /api/mobile/v1/sms with the app's test client: JSON, device token,
AES-GCM decryption, parsing, dedupe, one insert per batch and matching: once with texts nobody
claimed, once with half of each batch meeting a waiting claim (each of those completes a payment:
transaction, webhook outbox). Matching is timed in both directions at 1,000, 10,000 and 100,000 open
payments (and as many stored SMS): it must stay flat, because every lookup is an index probe on
(provider, provider_trx_id).
"""

import argparse
import secrets
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway import create_app  # noqa: E402
from gateway.accounts.models.brand import Brand  # noqa: E402
from gateway.clock import utcnow  # noqa: E402
from gateway.extensions import db  # noqa: E402
from gateway.payments.models.payment import Payment  # noqa: E402
from gateway.sms.matching import match_sms_to_claim, submit_claim  # noqa: E402
from gateway.sms.models.inbound_sms import InboundSms  # noqa: E402
from gateway.sms.parsing import build_sms_text  # noqa: E402
from gateway.sms.queries import CLAIMS_OF_TRX_IDS  # noqa: E402
from tests.factories import paired_device, sms_message  # noqa: E402

BATCH = 50
SIZES = (1_000, 10_000, 100_000)


def new_trx():
    """A random 10-character TrxID, as bKash prints them."""
    return secrets.token_hex(5).upper()


def payment_row(brand, status, trx=None, now=None):
    """Column values of an open payment, for bulk seeding."""
    now = now or utcnow()
    return {
        "public_id": str(uuid.uuid4()),
        "token": secrets.token_urlsafe(24),
        "brand_id": brand.id,
        "amount": Decimal("500.00"),
        # What a BDT payment collects with no fee (payments/amounts.py): the SMS must bring
        # amount_paid, so a row without it is never paid.
        "amount_bdt": Decimal("500.00"),
        "fee": Decimal("0.00"),
        "amount_paid": Decimal("500.00"),
        "amount_refunded": Decimal("0"),
        "currency": "BDT",
        "status": status,
        "provider": "bkash" if trx else None,
        "provider_trx_id": trx,
        "claimed_at": now if trx else None,
        "created_at": now,
        "updated_at": now,
        "expires_at": now + timedelta(hours=6),
    }


def sms_row(brand, trx, now=None):
    """Column values of a stored, unmatched incoming SMS."""
    now = now or utcnow()
    body = f"You have received Tk 500.00 from 01712345678. TrxID {trx}"
    return {
        "public_id": str(uuid.uuid4()),
        "brand_id": brand.id,
        "sender": "bKash",
        "body": body,
        "content_hash": secrets.token_hex(32),
        "provider": "bkash",
        "incoming": True,
        "amount": Decimal("500.00"),
        "provider_trx_id": trx,
        "status": "unmatched",
        "received_at": now,
        "created_at": now,
    }


def seed(brand, count):
    """Add `count` open payments (half claimed, waiting for their SMS) and as many stored SMS nobody
    claimed.
    """
    now = utcnow()
    for start in range(0, count, 5_000):
        size = min(5_000, count - start)
        db.session.execute(
            db.insert(Payment),
            [
                payment_row(
                    brand, "processing" if i % 2 else "created", new_trx() if i % 2 else None, now
                )
                for i in range(size)
            ],
        )
        db.session.execute(
            db.insert(InboundSms), [sms_row(brand, new_trx(), now) for _ in range(size)]
        )
        db.session.commit()


def bench_ingest(app, brand, batches, claimed):
    """Messages per second through POST /sms, 50 per call; with `claimed`, half complete a waiting
    claim.
    """
    device, tokens, aes_key = paired_device(brand)
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    client = app.test_client()
    when = utcnow().replace(tzinfo=None)
    # Like a real wallet, each text's printed balance continues the one before (docs/sms-trust.md):
    # otherwise every credit after the first is held for review and nothing completes.
    balance = Decimal("1000.00")
    payloads, claims = [], []
    for _ in range(batches):
        trx_ids = [new_trx() for _ in range(BATCH)]
        if claimed:
            claims += trx_ids[::2]
            db.session.execute(
                db.insert(Payment), [payment_row(brand, "processing", trx) for trx in trx_ids[::2]]
            )
        texts = []
        for trx in trx_ids:
            balance += Decimal("500.00")
            texts.append(
                build_sms_text("bkash", Decimal("500.00"), trx, "01712345678", balance, when)
            )
        payloads.append({"messages": [sms_message(aes_key, text) for text in texts]})
    db.session.commit()
    started, cpu_started = time.perf_counter(), time.process_time()
    for payload in payloads:
        response = client.post("/api/mobile/v1/sms", json=payload, headers=headers)
        assert response.status_code == 200 and response.get_json()["data"]["accepted"] == BATCH, (
            response.data
        )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    stored = dict(
        db.session.execute(
            db.select(InboundSms.status, db.func.count())
            .where(InboundSms.device_id == device.id)
            .group_by(InboundSms.status)
        ).all()
    )
    completed = db.session.execute(
        db.select(db.func.count())
        .select_from(Payment)
        .where(Payment.provider_trx_id.in_(claims), Payment.status == "completed")
    ).scalar_one()
    # Every text followed its chain: half matched their claim, the rest wait for one.
    assert completed == len(claims), (completed, len(claims))
    assert stored == {"matched": len(claims), "unmatched": batches * BATCH - len(claims)} or (
        not claims and stored == {"unmatched": batches * BATCH}
    ), stored
    return batches * BATCH / elapsed, elapsed / batches * 1000, cpu / batches * 1000


def time_ms(action):
    """Wall-clock and CPU milliseconds of one call."""
    started, cpu_started = time.perf_counter(), time.process_time()
    action()
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu_started) * 1000


def bench_matching(brand, trials):
    """Median milliseconds (wall clock, CPU) to settle one SMS with its claim, in each order."""
    at_ingest, at_submit = [], []
    for _ in range(trials):
        trx = new_trx()
        db.session.execute(db.insert(Payment), [payment_row(brand, "processing", trx)])
        db.session.execute(db.insert(InboundSms), [sms_row(brand, trx)])
        db.session.commit()
        sms = db.session.execute(
            db.select(InboundSms).where(
                InboundSms.brand_id == brand.id,
                InboundSms.provider == "bkash",
                InboundSms.provider_trx_id == trx,
            )
        ).scalar_one()
        at_ingest.append(time_ms(lambda: match_sms_to_claim(sms)))
        assert sms.status == "matched"
        trx = new_trx()
        db.session.execute(db.insert(InboundSms), [sms_row(brand, trx)])
        db.session.execute(db.insert(Payment), [payment_row(brand, "created")])
        db.session.commit()
        payment = db.session.execute(
            db.select(Payment).order_by(Payment.id.desc()).limit(1)
        ).scalar_one()
        at_submit.append(time_ms(lambda: submit_claim(payment, "bkash", trx)))
        assert payment.status == "completed"
    return [
        (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times))
        for times in (at_ingest, at_submit)
    ]


def lookup_plans():
    """The engine's plan for both matching lookups, to show they are index probes."""
    queries = {
        "claims of a TrxID": db.select(Payment).where(
            Payment.provider == "bkash", Payment.provider_trx_id == "X"
        ),
        # The statement ingestion runs (gateway/sms/queries.py), with a batch's values.
        "claims of a batch": CLAIMS_OF_TRX_IDS.params(provider="bkash", trx_ids=["X", "Y", "Z"]),
        "SMS of a TrxID": db.select(InboundSms).where(
            InboundSms.brand_id == 1,
            InboundSms.provider == "bkash",
            InboundSms.provider_trx_id == "X",
        ),
    }
    prefix = "EXPLAIN QUERY PLAN " if db.engine.dialect.name == "sqlite" else "EXPLAIN "
    for name, query in queries.items():
        sql = str(query.compile(db.engine, compile_kwargs={"literal_binds": True}))
        rows = db.session.execute(db.text(prefix + sql)).all()
        yield name, " | ".join(str(row[-1]).strip() for row in rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--trials", type=int, default=100)
    args = parser.parse_args()
    url = (
        args.database_url
        or f"sqlite:///{Path(tempfile.mkdtemp(prefix='sms-bench-')) / 'bench.sqlite3'}"
    )
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": url,
            "RATELIMIT_ENABLED": False,
            "REDIS_URL": None,
            "JOBS_IN_PROCESS": False,
        }
    )
    with app.app_context():
        db.drop_all()
        db.create_all()
        brand = Brand(name="Bench Shop", slug="bench", webhook_url="http://127.0.0.1:9/hooks")
        db.session.add(brand)
        db.session.commit()
        print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}")
        print(f"engine: {db.engine.dialect.name}\n")
        for claimed, label in (
            (False, "nobody claimed them"),
            (True, "half complete a waiting claim"),
        ):
            rate, per_batch, cpu = bench_ingest(app, brand, args.batches, claimed)
            # CPU time of this process (with SQLite, the database's work too): steadier than the
            # wall clock on a machine shared with other work.
            print(
                f"ingestion, {label}: {rate:,.0f} messages/s "
                f"({per_batch:.1f} ms per batch of {BATCH}, {cpu:.1f} ms CPU, "
                f"{args.batches} batches)"
            )
        claimed_rate = rate
        print()
        print(
            f"{'open payments':>14}{'stored SMS':>12}{'match at ingest':>18}{'match at submit':>18}"
            f"{'(CPU: ingest':>16}{'submit)':>12}"
        )
        seeded, costs = 0, []
        for size in SIZES:
            seed(brand, size - seeded)
            seeded = size
            (ingest_ms, ingest_cpu), (submit_ms, submit_cpu) = bench_matching(brand, args.trials)
            costs.append((ingest_ms, submit_ms, ingest_cpu, submit_cpu))
            print(
                f"{size:>14,}{size:>12,}{ingest_ms:>15.2f} ms{submit_ms:>15.2f} ms"
                f"{ingest_cpu:>13.2f} ms{submit_cpu:>9.2f} ms"
            )
        print()
        for name, plan in lookup_plans():
            print(f"plan, {name}: {plan}")
    # Targets (issue 17): >= 1,000 messages/s with half completing a claim; matching flat (<= 1.2x).
    growth = max(costs[-1][i] / costs[0][i] for i in range(2))
    cpu_growth = max(costs[-1][i] / costs[0][i] for i in range(2, 4))
    missed = []
    print()
    for label, met in (
        (f"{claimed_rate:,.0f} messages/s, half completing (>= 1,000/s)", claimed_rate >= 1000),
        (
            f"matching {growth:.2f}x from {SIZES[0]:,} to {SIZES[-1]:,} (<= 1.2x; "
            f"CPU {cpu_growth:.2f}x)",
            growth <= 1.2,
        ),
    ):
        print(f"target {label}: {'met' if met else 'MISSED'}")
        missed += [label] * (not met)
    if missed:
        raise SystemExit("benchmark missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
