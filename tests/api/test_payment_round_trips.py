"""What the merchant's busiest calls cost the database, on each engine: statements sent and commits
made, counted with SQLAlchemy's engine events. A change that adds one fails here.
"""

import pytest
from sqlalchemy import event

from gateway.accounts.api_keys import generate_key, revoke_key
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.conftest import ENGINE
from tests.factories import completed_payment

FULL_BODY = {
    "amount": "500.00",
    "currency": "BDT",
    "reference": "ORDER-1",
    "callback_url": "https://93.184.215.14/hooks/payments",
    "redirect_url": "https://shop.example/orders/1/paid",
    "cancel_url": "https://shop.example/orders/1/cancelled",
    "customer_name": "Customer 1",
    "customer_mail": "customer1@shop.example",
    "customer_phone": "+8801712000001",
}


class Trail:
    """The statements (first word and table) and commits the engine saw, in order."""

    def __init__(self):
        self.events = []

    def statement(self, conn, cursor, statement, *args):
        self.events.append(" ".join(statement.split()[:3]))

    def commit(self, conn):
        self.events.append("COMMIT")

    @property
    def statements(self):
        return [item for item in self.events if item != "COMMIT"]

    @property
    def commits(self):
        return self.events.count("COMMIT")


@pytest.fixture
def trail(app):
    """Every statement and commit from here on."""
    seen = Trail()
    event.listen(db.engine, "before_cursor_execute", seen.statement)
    event.listen(db.engine, "commit", seen.commit)
    yield seen
    event.remove(db.engine, "before_cursor_execute", seen.statement)
    event.remove(db.engine, "commit", seen.commit)


@pytest.fixture
def warm_auth(client, brand, make_key):
    """A key already used once: its last_used_at, written at most once a minute, is fresh."""
    auth = make_key(brand)
    assert client.get("/api/v1/payments?per_page=1", headers=auth).status_code == 200
    return auth


def test_reading_a_payment_back_is_one_statement_and_no_commit(client, brand, warm_auth, trail):
    payment = completed_payment(brand=brand)
    url, trx_id = f"/api/v1/payments/{payment.public_id}", payment.transaction.trx_id
    trail.events.clear()

    response = client.get(url, headers=warm_auth)

    assert response.status_code == 200
    assert response.get_json()["data"]["trx_id"] == trx_id
    assert len(trail.statements) == 1, trail.events  # the key with the payment
    assert trail.commits == 0


def test_creating_a_payment_is_one_commit(client, warm_auth, trail):
    response = client.post("/api/v1/payments", json=FULL_BODY, headers=warm_auth)

    assert response.status_code == 201
    assert trail.commits == 1, trail.events
    # The key with its brand, the customer's upsert, the payment's INSERT.
    assert len(trail.statements) == 3, trail.events
    assert trail.events[-1] == "COMMIT"


def test_a_keyed_create_commits_its_payment_with_its_answer(client, warm_auth, trail):
    """The payment commits together with its stored answer. On PostgreSQL that is the one commit:
    the key is held by a lock taken with the look for a stored answer. SQLite commits a reservation
    first, so that a repeat while this one runs is 409 in progress (docs/spec/CONTRACT.md)."""
    headers = {**warm_auth, "Idempotency-Key": "order-1"}

    response = client.post("/api/v1/payments", json=FULL_BODY, headers=headers)

    assert response.status_code == 201
    answer = (
        "INSERT INTO idempotency_records" if ENGINE == "postgres" else "UPDATE idempotency_records"
    )
    assert (trail.commits, len(trail.statements)) == ((1, 5) if ENGINE == "postgres" else (2, 7)), (
        trail.events
    )
    payment_insert = next(
        i for i, e in enumerate(trail.events) if e.startswith("INSERT INTO payments")
    )
    assert trail.events[payment_insert:].count("COMMIT") == 1  # with the answer
    assert any(e.startswith(answer) for e in trail.events[payment_insert:])


def test_the_first_use_in_a_minute_adds_only_the_keys_last_used_time(
    client, brand, make_key, trail
):
    url = f"/api/v1/payments/{completed_payment(brand=brand).public_id}"
    auth = make_key(brand)
    trail.events.clear()

    response = client.get(url, headers=auth)

    assert response.status_code == 200
    assert trail.events == [trail.events[0], "UPDATE api_keys SET", "COMMIT"]


def test_a_revoked_key_reads_no_payment(client, brand):
    payment = completed_payment(brand=brand)
    key, secret = generate_key(brand, "soon revoked", ["read"])
    auth = {"Authorization": f"Bearer {secret}"}
    assert client.get(f"/api/v1/payments/{payment.public_id}", headers=auth).status_code == 200

    revoke_key(brand, key_id=key.id)
    response = client.get(f"/api/v1/payments/{payment.public_id}", headers=auth)

    assert (response.status_code, response.get_json()["code"]) == (401, "INVALID_TOKEN")
    assert "data" not in response.get_json()


def test_a_key_reads_no_payment_of_another_brand(client, brand, other_brand, make_key):
    theirs = completed_payment(brand=other_brand)

    response = client.get(f"/api/v1/payments/{theirs.public_id}", headers=make_key(brand))

    assert (response.status_code, response.get_json()["code"]) == (404, "PAYMENT_NOT_FOUND")


def test_a_key_without_the_read_scope_reads_no_payment(client, brand, make_key):
    payment = completed_payment(brand=brand)

    response = client.get(
        f"/api/v1/payments/{payment.public_id}", headers=make_key(brand, ["write"])
    )

    assert (response.status_code, response.get_json()["code"]) == (403, "INSUFFICIENT_SCOPE")
    assert "data" not in response.get_json()


def test_a_create_reading_its_brand_with_its_key_keeps_revocation_brand_and_scope(
    client, brand, other_brand, make_key
):
    """POST /payments reads the key's brand in the key's statement: each key creates for its own
    brand, one after the other in one application context, and a revoked or read-only key creates
    nothing."""
    ours, theirs = make_key(brand), make_key(other_brand)
    created = [
        client.post("/api/v1/payments", json=FULL_BODY, headers=headers).get_json()["data"]
        for headers in (ours, theirs, ours)
    ]
    owners = [
        db.session.execute(
            db.select(Payment.brand_id).where(Payment.public_id == data["payment_id"])
        ).scalar_one()
        for data in created
    ]
    assert owners == [brand.id, other_brand.id, brand.id]

    key, secret = generate_key(brand, "soon revoked", ["read", "write"])
    revoke_key(brand, key_id=key.id)
    refused = [
        client.post("/api/v1/payments", json=FULL_BODY, headers=headers)
        for headers in ({"Authorization": f"Bearer {secret}"}, make_key(brand, ["read"]))
    ]
    assert [(r.status_code, r.get_json()["code"]) for r in refused] == [
        (401, "INVALID_TOKEN"),
        (403, "INSUFFICIENT_SCOPE"),
    ]
    assert db.session.execute(db.select(db.func.count(Payment.id))).scalar_one() == 3
