"""A keyed refund (Idempotency-Key) bKash answers too late: its 503 REFUND_PENDING is stored, linked
to its pending attempt, in one commit with the attempt's audit row, and a repeat with the key
answers from the attempt as it stands: the same 503 while pending, the refund it became (201) once
made, a fresh refund once not made; never a second refund at bKash (docs/spec/CONTRACT.md,
idempotency)."""

from datetime import timedelta
from decimal import Decimal

from freezegun import freeze_time
from sqlalchemy import event

from gateway.accounts.idempotency import prune_idempotency_records
from gateway.accounts.models.idempotency import IdempotencyRecord
from gateway.api.idempotency import request_fingerprint
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.payment import Refund
from gateway.wallets.bkash import REFUND
from gateway.wallets.models import WalletRefund
from gateway.wallets.refunds import settle_wallets
from tests.checkout_helpers import payment, reloaded  # noqa: F401 - fixtures
from tests.conftest import ENGINE
from tests.wallets.bkash_support import bkash_api, standin  # noqa: F401 - fixtures
from tests.wallets.test_bkash_refunds import (
    after_the_attempt,
    bkash_payment,
    count,
    paid_transaction,
    writes_and_commits,
)

URL = "/api/v1/refunds"
KEY = "refund-order-7"


def keyed(auth, key=KEY):
    return {**auth, "Idempotency-Key": key}


def refund_left_pending(app, client, auth, transaction, standin, monkeypatch, made=True):
    """A keyed refund of 100.00 whose answer bKash sends after our timeout: the API's answer."""
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    standin.refund_delay, standin.refund_lost = 2, not made
    answer = client.post(URL, json=body_of(transaction), headers=keyed(auth))
    standin.refund_delay, standin.refund_lost = 0, False
    return answer


def body_of(transaction):
    return {"trx_id": transaction.trx_id, "amount": "100.00", "reason": "late"}


def the_record():
    db.session.expire_all()
    return db.session.execute(db.select(IdempotencyRecord)).scalar_one()


def test_a_repeat_while_the_refund_is_pending_replays_the_503_and_refunds_nothing(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    first = refund_left_pending(app, client, auth, transaction, standin, monkeypatch)
    assert first.status_code == 503 and first.get_json()["code"] == "REFUND_PENDING"
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    record = the_record()
    assert (record.response_status, record.wallet_refund_id) == (503, attempt.id)

    again = client.post(URL, json=body_of(transaction), headers=keyed(auth))

    assert again.status_code == 503
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert standin.calls(REFUND) == 1 and count(WalletRefund) == 1 and count(Refund) == 0
    assert reloaded(payment).amount_refunded == 0
    # Another key is another refund: refused while this one is pending, nothing sent.
    other = client.post(URL, json=body_of(transaction), headers=keyed(auth, "another"))
    assert other.status_code == 409 and other.get_json()["code"] == "WALLET_REFUND_PENDING"
    assert standin.calls(REFUND) == 1


def test_the_audit_row_and_the_stored_503_commit_together_after_the_attempt(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    with writes_and_commits() as seen:
        first = refund_left_pending(app, client, auth, transaction, standin, monkeypatch)
    assert first.status_code == 503
    # The attempt commits on its own connection before bKash is called; then one commit: on
    # PostgreSQL the key's lock is held to it (the record written with the answer); on SQLite the
    # reservation committed before the work is completed in it.
    assert after_the_attempt(seen) == [
        "wallet_refunds",
        "COMMIT",
        "audit_logs",
        "idempotency_records",
        "COMMIT",
    ], seen


def test_once_made_a_repeat_answers_the_refund_it_became(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    refund_left_pending(app, client, auth, transaction, standin, monkeypatch)
    assert settle_wallets(now=utcnow() + timedelta(minutes=2)) == ["made"]
    refund = db.session.execute(db.select(Refund)).scalar_one()

    again = client.post(URL, json=body_of(transaction), headers=keyed(auth))

    assert again.status_code == 201, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    data = again.get_json()["data"]
    assert (data["id"], data["trx_id"], data["amount"], data["reason"], data["status"]) == (
        refund.id,
        transaction.trx_id,
        "100.00",
        "late",
        "completed",
    )
    assert data == client.get(f"{URL}/{refund.id}", headers=auth).get_json()["data"]
    assert standin.calls(REFUND) == 2  # the refund, then its status query: never a second refund
    assert bkash_payment(standin, payment)["refunded"] == Decimal("100.00")
    assert count(Refund) == 1 and reloaded(payment).amount_refunded == Decimal("100.00")


def test_once_not_made_a_repeat_refunds_afresh_and_stores_its_answer(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    refund_left_pending(app, client, auth, transaction, standin, monkeypatch, made=False)
    assert settle_wallets(now=utcnow() + timedelta(minutes=2)) == ["not_made"]

    again = client.post(URL, json=body_of(transaction), headers=keyed(auth))
    assert again.status_code == 201, again.get_json()
    assert "Idempotent-Replayed" not in again.headers
    third = client.post(URL, json=body_of(transaction), headers=keyed(auth))

    assert third.status_code == 201 and third.headers["Idempotent-Replayed"] == "true"
    assert third.get_json() == again.get_json()
    record = the_record()
    assert (record.response_status, record.wallet_refund_id) == (201, None)
    assert bkash_payment(standin, payment)["refunded"] == Decimal("100.00")
    assert count(Refund) == 1 and reloaded(payment).amount_refunded == Decimal("100.00")


def test_a_pending_record_is_pruned_after_24_hours_and_the_key_still_refunds_nothing(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    refund_left_pending(app, client, auth, transaction, standin, monkeypatch)
    with freeze_time(utcnow() + timedelta(hours=25)):
        assert prune_idempotency_records() == 1

    again = client.post(URL, json=body_of(transaction), headers=keyed(auth))

    assert again.status_code == 409 and again.get_json()["code"] == "WALLET_REFUND_PENDING"
    assert standin.calls(REFUND) == 1 and count(IdempotencyRecord) == 0


def test_a_first_request_answered_just_after_the_repeat_looked_is_not_refunded_again(
    client, auth, payment, bkash_api, standin
):
    """The window between a repeat's look for a stored answer and its hold on the key: a first
    request with the key commits its answer there. On PostgreSQL the look and the lock are one
    statement whose snapshot predates that commit; the repeat must still see it before bKash is
    asked for a second refund. On SQLite the repeat's reservation meets the record and replays
    it."""
    transaction = paid_transaction(client, payment, bkash_api)
    answered = []

    def first_request_answers(conn, cursor, statement, *args):
        if answered or "idempotency_records" not in statement or not statement.startswith("SELECT"):
            return
        answered.append(True)
        with db.engine.connect() as other:  # the first request's commit, on its own connection
            other.execute(
                IdempotencyRecord.__table__.insert().values(
                    brand_id=transaction.brand_id,
                    key=KEY,
                    request_hash=request_fingerprint(),
                    response_status=201,
                    response_body='{"success": true, "data": {"refund_id": "first"}}',
                    created_at=utcnow(),
                )
            )
            other.commit()

    event.listen(db.engine, "after_cursor_execute", first_request_answers)
    try:
        again = client.post(URL, json=body_of(transaction), headers=keyed(auth))
    finally:
        event.remove(db.engine, "after_cursor_execute", first_request_answers)

    assert answered
    if ENGINE == "postgres":
        assert (again.status_code, again.get_json()["code"]) == (409, "IDEMPOTENCY_IN_PROGRESS")
    else:
        assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
        assert again.get_json()["data"] == {"refund_id": "first"}
    assert standin.calls(REFUND) == 0
    assert count(WalletRefund) == 0 and count(Refund) == 0
    assert reloaded(payment).amount_refunded == 0
