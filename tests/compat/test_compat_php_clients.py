"""Each dialect driven by a PHP client (Debian's php-cli with php-curl) against a live server, and
the IPN checked by a PHP handler under `php -S` that looks its header up case-sensitively, as the
plugins do."""

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import submit_trx_id
from tests.factories import bkash_text, ingest

PHP_DIR = Path(__file__).resolve().parent / "php"
PHP = shutil.which("php")
pytestmark = pytest.mark.skipif(PHP is None, reason="php-cli is not installed (make php)")
BASES = {"uddoktapay": "/api/checkout-v2", "piprapay2": "", "piprapay3": "/api"}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def php_ipn(tmp_path):
    """Start `php -S` with a dialect's script as the shop's IPN endpoint; yields (url, log
    reader)."""
    started = []

    def start(dialect, key, base):
        port, log = free_port(), tmp_path / f"{dialect}-ipn.log"
        env = {
            **os.environ,
            "PLUGIN_KEY": key,
            "PLUGIN_BASE": base,
            "ORDER_AMOUNT": "500.00",
            "IPN_LOG": str(log),
        }
        process = subprocess.Popen(
            [PHP, "-S", f"127.0.0.1:{port}", str(PHP_DIR / f"{dialect}.php")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)

        def entries(count=1, timeout=20):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                lines = log.read_text().splitlines() if log.exists() else []
                if len(lines) >= count:
                    return [json.loads(line) for line in lines]
                time.sleep(0.05)
            raise AssertionError("the PHP IPN handler logged nothing")

        return f"http://127.0.0.1:{port}/ipn.php", entries

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


def php(dialect, *args):
    """Run the dialect's PHP client; its printed JSON answer ({http, body})."""
    done = subprocess.run(
        [PHP, str(PHP_DIR / f"{dialect}.php"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def pay_newest(client, phone, method, trx_id):
    """The customer pays the newest dialect payment: claim at checkout, then the bKash SMS."""
    db.session.expire_all()
    row = (
        db.session.execute(db.select(CompatPayment).order_by(CompatPayment.id.desc()))
        .scalars()
        .first()
    )
    assert submit_trx_id(client, row.payment, method, trx_id=trx_id).status_code == 303
    ingest(phone, bkash_text(amount="500.00", trx_id=trx_id))
    return row


def deliver_pending():
    """Attempt every due delivery now (the live server's own worker may get there first)."""
    db.session.expire_all()
    for delivery_id in db.session.execute(
        db.select(WebhookDelivery.id).where(WebhookDelivery.status == "pending")
    ).scalars():
        deliver_webhook(delivery_id)


@pytest.mark.parametrize("dialect", ["uddoktapay", "piprapay2", "piprapay3"])
def test_a_php_plugin_creates_is_notified_verifies_and_refunds(
    live_server, client, compat_key, bkash, phone, php_ipn, dialect
):
    key = compat_key(dialect)
    base = live_server + BASES[dialect]
    ipn_url, ipn_log = php_ipn(dialect, key, base)

    created = php(dialect, "create", base, key, ipn_url, "500")
    assert created["http"] == 200, created
    body = created["body"]
    url = body.get("payment_url") or body.get("pp_url")
    assert "/checkout/" in url

    row = pay_newest(client, phone, bkash, "5K4J3H2G1F")
    deliver_pending()
    [entry] = ipn_log()
    assert entry["ok"] is True, entry
    assert entry["invoice"] == {"uddoktapay": "77", "piprapay2": "88", "piprapay3": "99"}[dialect]

    verified = php(dialect, "verify", base, key, row.external_id)
    assert verified["http"] == 200 and verified["body"]["transaction_id"] == "5K4J3H2G1F"
    if dialect == "uddoktapay":
        refund = php(dialect, "refund", base, key, "5K4J3H2G1F", "100")
        assert refund == {"http": 200, "body": {"status": True, "message": "Refund completed"}}
    elif dialect == "piprapay3":
        refund = php(dialect, "refund", base, key, row.external_id)
        assert refund["http"] == 200 and refund["body"]["status"] == "refunded"


@pytest.mark.parametrize("dialect", ["uddoktapay", "piprapay2", "piprapay3"])
def test_a_php_plugin_with_a_wrong_key_reads_its_dialect_refusal(live_server, dialect):
    answer = php(dialect, "create", live_server + BASES[dialect], "wrong", "http://x.test/", "5")
    expected = {
        "uddoktapay": {"http": 401, "body": {"status": False, "message": "Invalid API key."}},
        "piprapay2": {
            "http": 400,
            "body": {"status": False, "message": "Unauthorized request. Invalid API key."},
        },
        "piprapay3": {
            "http": 400,
            "body": {"error": {"code": "INVALID_API_KEY", "message": "Invalid API key."}},
        },
    }
    assert answer == expected[dialect]
