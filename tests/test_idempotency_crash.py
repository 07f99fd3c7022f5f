"""Idempotency-Key across a crash: a gunicorn worker SIGKILLed mid-request, then the client's retry
with its key.

The worker is really killed (kill -9 at the moment tests/stalling_app.py stops it at: right after
the new payment or refund committed, or just before); the retry goes to the worker gunicorn
respawns. Whatever the moment, the key leads to exactly one object, and a retry after the commit
replays the stored answer.
"""

import os
import signal
import threading
import time
from decimal import Decimal

import pytest
import requests

from gateway.accounts.models.idempotency import IdempotencyRecord
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Refund
from tests.factories import completed_payment
from tests.gunicorn_support import Gunicorn

BODY = {"amount": "500.00", "currency": "BDT", "reference": "ORDER-CRASH"}


@pytest.fixture
def stalling_server(app, tmp_path):
    """Start a gunicorn of tests/stalling_app.py stalling at `stall_at`; yields (server, stall
    file).
    """
    servers = []

    def start(stall_at):
        stall_file = tmp_path / f"stalled-{stall_at}.pid"
        server = Gunicorn(
            "tests.stalling_app:app",
            {
                "STALL_FILE": str(stall_file),
                "STALL_AT": stall_at,
                "IDEMPOTENCY_LEASE_SECONDS": "1",
                "STALL_DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
            },
            log_path=tmp_path / "gunicorn.log",
        )
        servers.append(server)
        return server, stall_file

    yield start
    for server in servers:
        server.stop()


def post_and_kill(url, headers, body, stall_file):
    """POST from a thread, SIGKILL the worker once it stalls; what the client saw (an exception
    here).
    """
    seen = {}

    def send():
        try:
            seen["response"] = requests.post(url, json=body, headers=headers, timeout=60)
        except requests.RequestException as error:
            seen["error"] = error

    sender = threading.Thread(target=send)
    sender.start()
    for _ in range(600):
        if stall_file.exists() and stall_file.read_text():
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the request never reached the stall point")
    os.kill(int(stall_file.read_text()), signal.SIGKILL)
    sender.join(60)
    return seen


def retry_until_answered(url, headers, body):
    """Retry as a client would while the key is in progress (409); every answer in order."""
    answers = []
    for _ in range(200):
        # The first retry waits for the worker gunicorn respawns, which imports the app first: more
        # than 30 s on a loaded machine.
        response = requests.post(url, json=body, headers=headers, timeout=120)
        answers.append(response)
        if response.status_code != 409:
            return answers
        time.sleep(0.1)
    raise AssertionError("the key stayed in progress")


def committed(model):
    db.session.expire_all()
    return db.session.execute(db.select(model)).scalars().all()


@pytest.mark.parametrize("stall_at", ["after_commit", "before_commit"])
def test_a_payment_request_killed_mid_commit_leaves_one_payment_for_its_key(
    stalling_server, auth, stall_at
):
    server, stall_file = stalling_server(stall_at)
    url, headers = server.url + "/api/v1/payments", {**auth, "Idempotency-Key": f"crash-{stall_at}"}

    killed = post_and_kill(url, headers, BODY, stall_file)
    answers = retry_until_answered(url, headers, BODY)

    assert "error" in killed and "response" not in killed  # the killed request got no answer
    final = answers[-1]
    assert final.status_code == 201
    assert all(
        a.status_code == 409 and a.json()["code"] == "IDEMPOTENCY_IN_PROGRESS" for a in answers[:-1]
    )
    [payment] = committed(Payment)
    assert final.json()["data"]["payment_id"] == payment.public_id
    if stall_at == "after_commit":
        # The payment committed with its answer: the very first retry replays it.
        assert len(answers) == 1 and final.headers["Idempotent-Replayed"] == "true"
    else:
        # Nothing committed: after the lease the retry makes the payment, once.
        assert "Idempotent-Replayed" not in final.headers
    again = requests.post(url, json=BODY, headers=headers, timeout=30)
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == final.json()
    [record] = committed(IdempotencyRecord)
    assert record.response_status == 201


@pytest.mark.parametrize("stall_at", ["after_commit", "before_commit"])
def test_a_refund_request_killed_mid_commit_refunds_once(stalling_server, brand, auth, stall_at):
    payment = completed_payment(brand=brand, amount=Decimal("50.00"))
    trx_id = payment.transaction.trx_id
    server, stall_file = stalling_server(stall_at)
    url, headers = server.url + "/api/v1/refunds", {**auth, "Idempotency-Key": f"refund-{stall_at}"}
    body = {"trx_id": trx_id, "amount": "10.00"}

    killed = post_and_kill(url, headers, body, stall_file)
    answers = retry_until_answered(url, headers, body)

    assert "error" in killed
    assert answers[-1].status_code == 201
    [refund] = committed(Refund)
    assert (refund.amount, answers[-1].json()["data"]["id"]) == (Decimal("10.00"), refund.id)
    paid = db.session.get(Payment, payment.id)
    assert (paid.amount_refunded, paid.status) == (Decimal("10.00"), "partially_refunded")
    assert paid.transaction.amount_refunded == Decimal("10.00")
