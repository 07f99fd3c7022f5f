"""A database connection lost mid-request: the client still gets JSON (its answer, or the 500
envelope), never HTML.

PostgreSQL only: the request's own backend is terminated (pg_terminate_backend) inside a real
gunicorn worker by tests/connection_killing_app.py, at the moment each test names.
"""

import time

import pytest
import requests

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.factories import PaymentFactory
from tests.gunicorn_support import Gunicorn

KILL = {"X-Test-Kill-Connection": "1"}


@pytest.fixture
def killing_server(app, tmp_path):
    """Start a gunicorn of tests/connection_killing_app.py terminating connections at `kill_at`."""
    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        pytest.skip("pg_terminate_backend needs PostgreSQL (TEST_DB=postgres)")
    servers = []

    def start(kill_at, lease_seconds=1):
        server = Gunicorn(
            "tests.connection_killing_app:app",
            {
                "KILL_DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
                "KILL_AT": kill_at,
                "KILL_LEASE_SECONDS": str(lease_seconds),
            },
            log_path=tmp_path / "gunicorn.log",
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def status_of(payment):
    db.session.expire_all()
    return db.session.get(Payment, payment.id).status


def test_a_connection_lost_after_the_work_committed_still_answers_json(killing_server, brand, auth):
    payment = PaymentFactory(brand=brand)
    server = killing_server("teardown")

    response = requests.post(
        f"{server.url}/api/v1/payments/{payment.public_id}/cancel",
        headers={**auth, **KILL},
        timeout=30,
    )

    assert response.headers["Content-Type"] == "application/json"
    assert response.status_code == 200  # the cancel committed: its own answer, not a bare 500
    assert response.json()["data"]["status"] == "cancelled"
    assert response.headers["X-Request-ID"]
    assert status_of(payment) == "cancelled"
    after = requests.get(
        f"{server.url}/api/v1/payments/{payment.public_id}", headers=auth, timeout=30
    )
    assert after.status_code == 200  # the worker dropped the dead connection and serves on


def test_a_connection_lost_mid_view_answers_the_500_envelope_with_the_request_id(
    killing_server, brand, auth
):
    payment = PaymentFactory(brand=brand)
    server = killing_server("after_commit")

    response = requests.post(
        f"{server.url}/api/v1/payments/{payment.public_id}/cancel",
        headers={**auth, **KILL, "X-Request-ID": "lost-connection-1"},
        timeout=30,
    )

    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert (response.status_code, body["code"], body["request_id"]) == (
        500,
        "INTERNAL_ERROR",
        "lost-connection-1",
    )
    assert "terminating connection" not in response.text
    assert status_of(payment) == "cancelled"  # the work had committed before the connection went
    after = requests.get(
        f"{server.url}/api/v1/payments/{payment.public_id}", headers=auth, timeout=30
    )
    assert after.status_code == 200


def test_a_keyed_payment_lost_in_flight_stores_its_answer_and_the_retry_makes_one(
    killing_server, auth
):
    server = killing_server("answer")
    url, headers = f"{server.url}/api/v1/payments", {**auth, "Idempotency-Key": "lost-at-answer"}
    body = {"amount": "500.00", "currency": "BDT"}

    failed = requests.post(url, json=body, headers={**headers, **KILL}, timeout=30)

    assert (failed.status_code, failed.json()["code"]) == (500, "INTERNAL_ERROR")
    assert failed.json()["request_id"]
    assert (
        db.session.scalar(db.select(db.func.count()).select_from(Payment)) == 0
    )  # work and answer: neither
    for _ in range(200):  # the key stays in progress for its lease, then the retry takes it over
        retried = requests.post(url, json=body, headers=headers, timeout=30)
        if retried.status_code != 409:
            break
        time.sleep(0.1)
    assert retried.status_code == 201
    db.session.expire_all()
    assert db.session.execute(db.select(Payment.public_id)).scalars().all() == [
        retried.json()["data"]["payment_id"]
    ]


def test_a_keyed_request_that_lost_its_connection_frees_its_key_for_the_retry_at_once(
    killing_server, auth
):
    server = killing_server("answer", lease_seconds=300)  # no takeover within this test
    url, headers = f"{server.url}/api/v1/payments", {**auth, "Idempotency-Key": "freed-at-once"}
    body = {"amount": "500.00", "currency": "BDT"}

    failed = requests.post(url, json=body, headers={**headers, **KILL}, timeout=30)
    retried = requests.post(url, json=body, headers=headers, timeout=30)

    assert (failed.status_code, failed.json()["code"]) == (500, "INTERNAL_ERROR")
    assert retried.status_code == 201, retried.text  # not 409 in progress for the whole lease
    db.session.expire_all()
    assert db.session.execute(db.select(Payment.public_id)).scalars().all() == [
        retried.json()["data"]["payment_id"]
    ]
    replayed = requests.post(url, json=body, headers=headers, timeout=30)
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert replayed.json() == retried.json()
