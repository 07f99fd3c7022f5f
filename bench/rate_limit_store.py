"""Rate-limit benchmark: the database store's cost per hit, and what it adds to GET /payments/{id}.

Run: `.venv/bin/python bench/rate_limit_store.py [--database-url URL] [--requests 500]`
(default: a fresh SQLite file; pass a PostgreSQL URL to measure there — its tables are dropped and
rebuilt).

Without Redis every web process counts its limits in the `rate_limit_counters` table (one upsert per
hit); `RATELIMIT_STORAGE_URI=memory://` counts in each process instead. The request figures go
through the app's test client, one process, best of three runs.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway import create_app  # noqa: E402
from gateway.accounts.api_keys import generate_key  # noqa: E402
from gateway.accounts.models.brand import Brand  # noqa: E402
from gateway.accounts.rate_limit_store import count_hit  # noqa: E402
from gateway.extensions import db  # noqa: E402


def build(url, storage_uri=None):
    """A fresh app on `url` with limits on (out of reach), counting in `storage_uri` or the default
    store.
    """
    settings = {
        "APP_ENV": "testing",
        "SQLALCHEMY_DATABASE_URI": url,
        "REDIS_URL": None,
        "RATELIMIT_ENABLED": True,
        "API_RATE_LIMIT": "1000000/second",
    }
    if storage_uri:
        settings["RATELIMIT_STORAGE_URI"] = storage_uri
    app = create_app(settings)
    with app.app_context():
        db.drop_all()
        db.create_all()
    return app


def per_hit_us(app, hits):
    """Microseconds per count_hit over `hits` hits spread over 50 keys."""
    with app.app_context():
        started = time.perf_counter()
        for n in range(hits):
            count_hit(f"LIMITER/bench/{n % 50}", 60)
        return (time.perf_counter() - started) / hits * 1e6


def per_request_ms(app, requests):
    """Milliseconds per GET /api/v1/payments/{id}, best of three runs of `requests`."""
    with app.app_context():
        brand = Brand(name="Bench", slug="bench", currencies="BDT")
        db.session.add(brand)
        db.session.commit()
        _, secret = generate_key(brand, "bench", ["read", "write"])
    client, headers = app.test_client(), {"Authorization": f"Bearer {secret}"}
    created = client.post(
        "/api/v1/payments", json={"amount": "5.00", "currency": "BDT"}, headers=headers
    )
    url = f"/api/v1/payments/{created.get_json()['data']['payment_id']}"
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(requests):
            assert client.get(url, headers=headers).status_code == 200
        runs.append((time.perf_counter() - started) / requests * 1e3)
    return min(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    url = (
        args.database_url or f"sqlite:///{tempfile.mkdtemp(prefix='gateway-bench-')}/limits.sqlite3"
    )
    engine = url.split(":")[0]
    database = build(url)
    print(f"{engine}: {per_hit_us(database, 2000):.0f} µs per hit in the database store")
    memory_ms = per_request_ms(build(url, "memory://"), args.requests)
    database_ms = per_request_ms(build(url), args.requests)
    print(
        f"{engine}: GET /payments/{{id}} {memory_ms:.2f} ms counting in memory, "
        f"{database_ms:.2f} ms in the database"
    )


if __name__ == "__main__":
    main()
