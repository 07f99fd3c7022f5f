"""The database rate-limit store: an atomic count per window on both engines, windows that end and
are pruned, and limits that hold across real gunicorn worker processes without Redis."""

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from gateway.accounts.models.rate_limit import RateLimitCounter
from gateway.accounts.rate_limit_store import (
    DatabaseStorage,
    count_hit,
    prune_rate_limit_counters,
    storage_uri,
)
from gateway.extensions import db
from tests.local_servers import free_port

ROOT = Path(__file__).resolve().parent.parent
TOKEN = re.compile(r'name="csrf_token" (?:type="hidden" )?value="([^"]+)"')


def test_hits_from_many_threads_at_once_are_all_counted(app):
    def hammer():
        with app.app_context():
            for _ in range(10):
                count_hit("LIMITER/race", 60)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert DatabaseStorage().get("LIMITER/race") == 80


def test_a_window_that_ended_starts_again_from_one_hit(monkeypatch):
    storage = DatabaseStorage()
    assert [storage.incr("LIMITER/window", 60) for _ in range(3)] == [1, 2, 3]
    ends = storage.get_expiry("LIMITER/window")
    monkeypatch.setattr(time, "time", lambda: ends + 1)
    assert storage.get("LIMITER/window") == 0
    assert storage.incr("LIMITER/window", 60) == 1
    assert storage.get_expiry("LIMITER/window") == pytest.approx(ends + 61)


def test_prune_deletes_only_the_windows_that_ended(monkeypatch):
    count_hit("LIMITER/short", 1)
    count_hit("LIMITER/long", 3600)
    real_time = time.time()
    monkeypatch.setattr(time, "time", lambda: real_time + 2)
    assert prune_rate_limit_counters() == 1
    assert db.session.execute(db.select(RateLimitCounter.key)).scalars().all() == ["LIMITER/long"]


def test_a_key_longer_than_the_column_is_counted_under_its_digest():
    key = "LIMITER/sign-in/" + "x" * 400
    storage = DatabaseStorage()
    assert [storage.incr(key, 60) for _ in range(2)] == [1, 2]
    [stored] = db.session.execute(db.select(RateLimitCounter.key)).scalars().all()
    assert stored.startswith("sha256:") and len(stored) <= 255
    storage.clear(key)
    assert storage.get(key) == 0


@pytest.mark.parametrize(
    "settings, uri",
    [
        ({"REDIS_URL": None}, "gateway+db://"),
        ({"REDIS_URL": "redis://127.0.0.1:6379/0"}, "gateway+redis://127.0.0.1:6379/0"),
        (
            {"REDIS_URL": None, "RATELIMIT_STORAGE_URI": "rediss://cache.internal:6380/2"},
            "gateway+rediss://cache.internal:6380/2",
        ),
        (
            {"REDIS_URL": "redis://127.0.0.1:6379/0", "RATELIMIT_STORAGE_URI": "memory://"},
            "memory://",
        ),
    ],
)
def test_limits_use_the_shared_store_unless_told_otherwise(settings, uri):
    class App:
        config = settings

    assert storage_uri(App) == uri


def worker_pids(master):
    """The gunicorn master's worker processes."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


@pytest.fixture(scope="module")
def gunicorn(app, tmp_path_factory):
    """A real gunicorn with two sync workers on a loopback port, no Redis, low limits; one for the
    module (booting two workers is most of each test's time). Each test starts with empty tables,
    so with no hit counted."""
    tmp_path = tmp_path_factory.mktemp("gunicorn")
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(
        {
            "APP_ENV": "testing",
            "TEST_DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
            "RATELIMIT_ENABLED": "true",
            "LOGIN_RATE_LIMIT": "4/minute",
            "API_AUTH_FAILURE_LIMIT": "3/minute",
            "CHECKOUT_CLAIM_RATE_LIMIT": "2/hour",
            "PYTHONUNBUFFERED": "1",
        }
    )
    log = open(tmp_path / "gunicorn.log", "wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
            "app:app",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"

    def ready():
        try:
            return (
                len(worker_pids(process.pid)) == 2 and requests.get(base + "/healthz", timeout=2).ok
            )
        except (requests.RequestException, FileNotFoundError):
            return False

    pause = threading.Event()
    for _ in range(200):
        if ready():
            break
        pause.wait(0.1)
    else:
        raise RuntimeError((tmp_path / "gunicorn.log").read_text())
    yield base, worker_pids(process.pid)
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    log.close()


def test_the_sign_in_limit_holds_across_gunicorn_workers_without_redis(gunicorn):
    base, (first, second) = gunicorn
    browser = requests.Session()
    token = TOKEN.search(browser.get(base + "/panel/sign-in", timeout=10).text).group(1)

    def failed_sign_in():
        return browser.post(
            base + "/panel/sign-in",
            data={"email": "nobody@shop.test", "password": "wrong", "csrf_token": token},
            timeout=10,
        ).status_code

    def served_only_by(running, stopped):
        """Failed sign-ins while `stopped` cannot accept connections, so `running` answers them
        all."""
        os.kill(stopped, signal.SIGSTOP)
        try:
            return [failed_sign_in() for _ in range(2)]
        finally:
            os.kill(stopped, signal.SIGCONT)

    assert served_only_by(first, second) == [200, 200]
    # The second worker has seen none of them, and still refuses the fifth: the count is in the
    # database.
    os.kill(first, signal.SIGSTOP)
    try:
        assert [failed_sign_in() for _ in range(3)] == [200, 200, 429]
    finally:
        os.kill(first, signal.SIGCONT)


def served_by(running, stopped, send, times):
    """`send()` `times` times while `stopped` cannot accept connections, so `running` answers them
    all.
    """
    os.kill(stopped, signal.SIGSTOP)
    try:
        return [send() for _ in range(times)]
    finally:
        os.kill(stopped, signal.SIGCONT)


def test_the_sign_in_limit_per_address_holds_across_workers_for_many_e_mails(gunicorn):
    base, (first, second) = gunicorn
    browser = requests.Session()
    token = TOKEN.search(browser.get(base + "/panel/sign-in", timeout=10).text).group(1)
    emails = iter(f"guess{number}@shop.test" for number in range(10))

    def spray():
        return browser.post(
            base + "/panel/sign-in",
            data={"email": next(emails), "password": "wrong", "csrf_token": token},
            timeout=10,
        ).status_code

    assert served_by(first, second, spray, 2) == [200, 200]
    assert served_by(second, first, spray, 3) == [200, 200, 429]


def test_the_refused_api_key_limit_holds_across_workers(gunicorn):
    base, (first, second) = gunicorn
    made_up = iter(f"Bearer gw_live_made-up-{number}" for number in range(10))

    def refused_key():
        return requests.get(
            base + "/api/v1/payments", headers={"Authorization": next(made_up)}, timeout=10
        ).status_code

    assert served_by(first, second, refused_key, 2) == [401, 401]
    assert served_by(second, first, refused_key, 2) == [401, 429]


def test_pairing_guesses_are_limited_across_workers(gunicorn, brand):
    from gateway.devices.pairing import create_pairing_code

    base, (first, second) = gunicorn
    code = create_pairing_code(brand)
    guesses = iter(f"{(int(code) + step) % 1_000_000:06d}" for step in range(1, 20))

    def pair(pairing_code=None):
        return requests.post(
            base + "/api/mobile/v1/devices",
            json={
                "pairing_code": pairing_code or next(guesses),
                "device_id": "phone-1",
                "device_name": "Counter phone",
                "fingerprint": "install-1",
            },
            timeout=10,
        ).status_code

    # Five wrong guesses, spread over both workers, use the live code up (its budget is a column)
    # ...
    assert served_by(first, second, pair, 3) == [422, 422, 422]
    assert served_by(second, first, pair, 2) == [422, 422]
    assert served_by(second, first, lambda: pair(code), 1) == [422]
    # ... and ten tries a minute from one address, counted in the shared store, end in 429.
    assert served_by(first, second, pair, 4) == [422] * 4
    assert served_by(second, first, pair, 1) == [429]


def test_trx_id_guesses_for_one_payment_are_limited_across_workers(gunicorn, brand):
    from tests.factories import PaymentFactory, PaymentMethodFactory

    base, (first, second) = gunicorn
    method = PaymentMethodFactory(brand=brand)
    PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id="USED000001")
    payment = PaymentFactory(brand=brand)
    browser = requests.Session()
    page = browser.get(f"{base}/checkout/{payment.token}", timeout=10).text
    token = TOKEN.search(page).group(1)

    def claim(trx_id="USED000001"):
        return browser.post(
            f"{base}/checkout/{payment.token}/claim",
            data={"csrf_token": token, "method_id": method.id, "trx_id": trx_id},
            allow_redirects=False,
            timeout=10,
        ).status_code

    assert served_by(first, second, claim, 1) == [422]
    assert served_by(second, first, claim, 1) == [422]
    assert served_by(second, first, lambda: claim("GOOD000001"), 1) == [429]


def test_a_key_holding_a_nul_is_counted_under_its_digest():
    key = "LIMITER/sign-in/sign-in-email:a\x00@example.com"
    storage = DatabaseStorage()
    assert [storage.incr(key, 60) for _ in range(2)] == [1, 2]
    [stored] = db.session.execute(db.select(RateLimitCounter.key)).scalars().all()
    assert stored.startswith("sha256:")
