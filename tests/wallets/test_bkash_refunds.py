"""Refunds of payments bKash's API paid: made at bKash first (full and partial), recorded like any
refund with bKash's refund id; a refund bKash refuses is not recorded and says why; one bKash
answers too late is pending until the settle job asks bKash's refund status query, and is audited
(who asked, the amount, the reason). bKash is called outside any database transaction, its attempt
committed pending first."""

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal

import psycopg
import requests
from sqlalchemy import event
from sqlalchemy.engine import make_url

from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.audit import AuditLog
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.methods import update_method
from gateway.payments.models.payment import Refund, Transaction
from gateway.wallets.bkash import REFUND
from gateway.wallets.models import WalletPayment, WalletRefund
from gateway.wallets.refunds import settle_wallets
from gateway.webhooks.models.event import Event
from tests.checkout_helpers import payment, reloaded  # noqa: F401 - fixtures
from tests.factories import PaymentFactory, PaymentMethodFactory
from tests.wallets.bkash_support import bkash_api, pay_through_bkash, standin  # noqa: F401

API = "/api/v1"


def paid_transaction(client, payment, bkash_api):
    pay_through_bkash(client, payment, bkash_api)
    return db.session.execute(
        db.select(Transaction).where(Transaction.payment_id == payment.id)
    ).scalar_one()


def bkash_payment(standin, payment):
    row = db.session.execute(
        db.select(WalletPayment).where(WalletPayment.payment_id == payment.id)
    ).scalar_one()
    return standin.payments[row.provider_payment_id]


def test_a_partial_then_a_full_refund_are_made_at_bkash(client, auth, payment, bkash_api, standin):
    transaction = paid_transaction(client, payment, bkash_api)
    partial = client.post(
        f"{API}/refunds",
        json={"trx_id": transaction.trx_id, "amount": "200.00", "reason": "one item back"},
        headers=auth,
    )
    assert partial.status_code == 201, partial.get_json()
    assert bkash_payment(standin, payment)["refunded"] == Decimal("200.00")
    rest = client.post(f"{API}/refunds", json={"trx_id": transaction.trx_id}, headers=auth)
    assert rest.status_code == 201, rest.get_json()
    assert bkash_payment(standin, payment)["refunded"] == Decimal("500.00")
    refunds = db.session.execute(db.select(Refund).order_by(Refund.id)).scalars().all()
    assert [r.amount for r in refunds] == [Decimal("200.00"), Decimal("300.00")]
    assert all(r.provider_refund_id and r.provider_refund_id.startswith("R") for r in refunds)
    assert reloaded(transaction).status == "refunded"
    assert standin.calls(REFUND) == 2


def look_from_elsewhere(app, transaction_id):
    """From a connection of another process's kind: whether it can take the transaction's row at
    once (on SQLite the one write lock, on PostgreSQL the row's lock, NOWAIT), and the states of the
    wallet refunds it sees committed."""
    url = make_url(app.config["SQLALCHEMY_DATABASE_URI"])
    states = "SELECT state FROM wallet_refunds ORDER BY id"
    if url.get_backend_name() == "sqlite":
        connection = sqlite3.connect(url.database, timeout=0, isolation_level=None)
        try:
            try:
                connection.execute("BEGIN IMMEDIATE")
                connection.execute("ROLLBACK")
                writable = True
            except sqlite3.OperationalError:  # database is locked
                writable = False
            return writable, [state for (state,) in connection.execute(states)]
        finally:
            connection.close()
    plain = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as connection:
        try:
            with connection.transaction():
                connection.execute(
                    "SELECT id FROM transactions WHERE id = %s FOR UPDATE NOWAIT", (transaction_id,)
                )
            writable = True
        except psycopg.errors.LockNotAvailable:
            writable = False
        return writable, [state for (state,) in connection.execute(states)]


def test_the_call_to_bkash_holds_nothing_in_the_database(
    app, client, auth, payment, bkash_api, standin
):
    """While bKash takes its time over a refund, every other request can write: the call is made
    outside any database transaction (on SQLite, outside its one write lock), its attempt already
    committed pending."""
    transaction = paid_transaction(client, payment, bkash_api)
    seen = []
    refund_at_bkash = standin.refund

    def refund_while_looking(body):
        seen.append(look_from_elsewhere(app, transaction.id))
        return refund_at_bkash(body)

    standin.refund = refund_while_looking
    made = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )

    assert made.status_code == 201, made.get_json()
    assert seen == [(True, ["pending"])]
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    refund = db.session.execute(db.select(Refund)).scalar_one()
    assert (attempt.state, attempt.refund_id) == ("made", refund.id)
    assert attempt.provider_refund_id == refund.provider_refund_id
    assert refund.provider_refund_id.startswith("R")


def test_a_refund_bkash_refuses_is_not_recorded_and_says_why(
    client, auth, payment, bkash_api, standin
):
    transaction = paid_transaction(client, payment, bkash_api)
    bkash_payment(standin, payment)["refunded"] = Decimal("450.00")  # refunded at bKash by hand
    refused = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )
    assert refused.status_code == 409
    body = refused.get_json()
    assert body["code"] == "WALLET_REFUSED"
    assert "Refund amount exceeds the paid amount (2071)" in body["message"]
    assert db.session.execute(db.select(db.func.count()).select_from(Refund)).scalar() == 0
    assert reloaded(transaction).amount_refunded == 0
    assert reloaded(payment).amount_refunded == 0
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()  # closed, with bKash's word
    assert attempt.state == "not_made" and "(2071)" in attempt.last_error
    smaller = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "50.00"}, headers=auth
    )
    assert smaller.status_code == 201, smaller.get_json()  # nothing left pending in the way


def test_a_refund_when_bkash_is_down_is_not_recorded(client, auth, payment, bkash_api, standin):
    transaction = paid_transaction(client, payment, bkash_api)
    standin.__exit__()  # bKash unreachable
    refused = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )
    assert refused.status_code == 503
    assert refused.get_json()["code"] == "WALLET_UNAVAILABLE"
    assert db.session.execute(db.select(db.func.count()).select_from(Refund)).scalar() == 0


def refund_sent_too_late(app, client, auth, transaction, standin, monkeypatch, made=True):
    """A refund of 100.00 whose answer bKash sends after our timeout (made or, `made=False`, lost):
    the API's answer."""
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    standin.refund_delay = 2
    standin.refund_lost = not made
    answer = client.post(
        f"{API}/refunds",
        json={"trx_id": transaction.trx_id, "amount": "100.00", "reason": "late"},
        headers=auth,
    )
    standin.refund_delay, standin.refund_lost = 0, False
    return answer


def count(model):
    return db.session.execute(db.select(db.func.count()).select_from(model)).scalar()


def test_a_refund_bkash_answers_too_late_is_pending_then_recorded_once_by_the_job(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    pending = refund_sent_too_late(app, client, auth, transaction, standin, monkeypatch)
    assert pending.status_code == 503
    body = pending.get_json()
    assert body["code"] == "REFUND_PENDING"
    assert (
        "being checked with bKash" in body["message"] and "Do not refund again" in body["message"]
    )
    assert count(Refund) == 0
    assert reloaded(transaction).amount_refunded == 0 and reloaded(payment).amount_refunded == 0
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    assert (attempt.state, attempt.amount, attempt.reason) == ("pending", Decimal("100.00"), "late")
    again = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "50.00"}, headers=auth
    )
    assert again.status_code == 409
    assert again.get_json()["code"] == "WALLET_REFUND_PENDING"
    assert "pending at bKash" in again.get_json()["message"]
    assert settle_wallets() == []  # under a minute: bKash may still be at it
    later = utcnow() + timedelta(minutes=2)
    assert settle_wallets(now=later) == ["made"]
    assert settle_wallets(now=later) == []
    made = bkash_payment(standin, payment)["refunds"]
    refund = db.session.execute(db.select(Refund)).scalar_one()
    assert (refund.amount, refund.reason) == (Decimal("100.00"), "late")
    assert refund.provider_refund_id == made[0]["refundTrxID"]
    assert reloaded(transaction).amount_refunded == Decimal("100.00")
    assert reloaded(payment).amount_refunded == Decimal("100.00")
    db.session.refresh(attempt)
    assert (attempt.state, attempt.refund_id) == ("made", refund.id)
    assert standin.calls(REFUND) == 2  # the refund, then its status query: never a second refund
    audited = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "payment.wallet_refund_made")
    ).scalar_one()
    assert audited.user_email == "bKash refund status query"
    assert audited.details == {
        "wallet_refund_id": attempt.id,
        "amount": "100.00",
        "refund_id": refund.id,
        "provider_refund_id": refund.provider_refund_id,
    }
    assert bkash_payment(standin, payment)["refunded"] == Decimal("100.00")
    events = db.session.execute(
        db.select(db.func.count()).select_from(Event).where(Event.type == "refund.completed")
    ).scalar()
    assert events == 1


def test_a_fee_refund_a_refunded_payment_would_not_record_is_never_sent_to_bkash(
    client, auth, brand, payment, bkash_api, standin
):
    """Paid with a ৳10 fee and refunded in full without it; then the brand starts refunding fees.
    The fee's refund is refused before bKash is called: bKash must never return money the
    database will not record (the attempt would stay pending, blocking every later refund)."""
    update_method(bkash_api, fee_fixed=Decimal("10.00"))
    transaction = paid_transaction(client, payment, bkash_api)
    whole = client.post(f"{API}/refunds", json={"trx_id": transaction.trx_id}, headers=auth)
    assert whole.status_code == 201 and whole.get_json()["data"]["amount"] == "500.00"
    brand.refund_fee = True
    db.session.commit()

    fee = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "10.00"}, headers=auth
    )

    assert fee.status_code == 422 and fee.get_json()["code"] == "REFUND_EXCEEDS_REMAINING"
    assert standin.calls(REFUND) == 1 and bkash_payment(standin, payment)["refunded"] == 500
    states = db.session.execute(db.select(WalletRefund.state)).scalars().all()
    assert states == ["made"]


def nagad_refunds_left_to_the_merchant(brand, how_many):
    """`how_many` refunds pending at Nagad for days: it has no refund status query, so they wait
    for the merchant to settle them in the panel."""
    method = PaymentMethodFactory(brand=brand, provider="nagad", kind="api")
    long_ago = utcnow() - timedelta(days=3)
    for number in range(how_many):
        paid = PaymentFactory(brand=brand, status="completed")
        trip = WalletPayment(
            payment_id=paid.id,
            method_id=method.id,
            provider="nagad",
            provider_payment_id=f"NGD{number}",
            state="settled",
            amount=Decimal("500.00"),
            created_at=long_ago,
            updated_at=long_ago,
        )
        db.session.add(trip)
        db.session.flush()
        db.session.add(
            WalletRefund(
                payment_id=paid.id,
                wallet_payment_id=trip.id,
                amount=Decimal("100.00"),
                state="pending",
                created_at=long_ago,
                updated_at=long_ago,
            )
        )
    db.session.commit()


def test_refunds_left_to_the_merchant_never_hide_one_bkash_can_be_asked_about(
    app, brand, client, auth, payment, bkash_api, standin, monkeypatch
):
    nagad_refunds_left_to_the_merchant(brand, 100)  # the job's whole batch, were they in it
    transaction = paid_transaction(client, payment, bkash_api)
    pending = refund_sent_too_late(app, client, auth, transaction, standin, monkeypatch)
    assert pending.get_json()["code"] == "REFUND_PENDING"

    assert settle_wallets(now=utcnow() + timedelta(minutes=2)) == ["made"]
    assert reloaded(payment).amount_refunded == Decimal("100.00")
    waiting = db.select(db.func.count()).where(WalletRefund.state == "pending")
    assert db.session.execute(waiting).scalar() == 100  # still the merchant's to settle


def test_a_refund_whose_answer_is_cut_off_is_pending_never_refused(
    client, auth, payment, bkash_api, standin
):
    """bKash made the refund and the connection closed before its answer: the refund may have been
    made, so it is pending (never closed as refused, which would let the merchant refund again),
    and the job records it once."""
    transaction = paid_transaction(client, payment, bkash_api)
    standin.refund_cut = True
    cut = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )
    standin.refund_cut = False

    assert cut.status_code == 503, cut.get_json()
    assert cut.get_json()["code"] == "REFUND_PENDING"
    assert db.session.execute(db.select(WalletRefund.state)).scalar_one() == "pending"
    assert settle_wallets(now=utcnow() + timedelta(minutes=2)) == ["made"]
    refund = db.session.execute(db.select(Refund)).scalar_one()
    assert refund.provider_refund_id == bkash_payment(standin, payment)["refunds"][0]["refundTrxID"]
    assert bkash_payment(standin, payment)["refunded"] == Decimal("100.00")  # asked once
    assert reloaded(transaction).amount_refunded == Decimal("100.00")


def test_a_refund_bkash_never_made_is_closed_and_may_be_made_again(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    lost = refund_sent_too_late(app, client, auth, transaction, standin, monkeypatch, made=False)
    assert lost.status_code == 503 and lost.get_json()["code"] == "REFUND_PENDING"
    assert settle_wallets(now=utcnow() + timedelta(minutes=2)) == ["not_made"]
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    assert attempt.state == "not_made" and attempt.refund_id is None
    assert count(Refund) == 0 and reloaded(payment).amount_refunded == 0
    audited = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "payment.wallet_refund_not_made")
    ).scalar_one()
    assert (audited.user_email, audited.details) == (
        "bKash refund status query",
        {"wallet_refund_id": attempt.id, "amount": "100.00"},
    )
    again = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )
    assert again.status_code == 201, again.get_json()
    assert bkash_payment(standin, payment)["refunded"] == Decimal("100.00")
    assert reloaded(payment).amount_refunded == Decimal("100.00")


def test_racing_refunds_are_sent_to_bkash_one_at_a_time(
    live_server, client, auth, payment, bkash_api, standin
):
    """Refunds of one bKash payment at once: while one is at bKash (its attempt pending) the others
    are refused, so bKash is never asked twice for the same money and what it refunded is what is
    recorded."""
    transaction = paid_transaction(client, payment, bkash_api)
    standin.refund_delay = 0.3  # each refund a while at bKash: the racers meet it there
    body = {"trx_id": transaction.trx_id, "amount": "100.00"}
    start = threading.Barrier(6)

    def post(_):
        start.wait()
        response = requests.post(f"{live_server}{API}/refunds", json=body, headers=auth, timeout=60)
        return response.status_code, response.json().get("code")

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(post, range(6)))

    made = [result for result in results if result[0] == 201]
    assert set(results) - set(made) <= {(409, "WALLET_REFUND_PENDING")}, results
    assert standin.calls(REFUND) == len(made) >= 1
    db.session.expire_all()
    recorded = db.session.execute(db.select(db.func.sum(Refund.amount))).scalar()
    assert recorded == bkash_payment(standin, payment)["refunded"] == Decimal("100.00") * len(made)
    assert reloaded(transaction).amount_refunded == recorded
    states = db.session.execute(db.select(WalletRefund.state)).scalars().all()
    assert states == ["made"] * len(made)  # the refused ones never got an attempt


def pending_audits():
    """The audit rows of wallet refunds left pending: (who, target, details)."""
    return [
        (entry.user_id, entry.user_email, entry.target_type, entry.target_id, entry.details)
        for entry in db.session.execute(
            db.select(AuditLog)
            .where(AuditLog.action == "payment.wallet_refund_pending")
            .order_by(AuditLog.id)
        ).scalars()
    ]


def test_a_refund_left_pending_is_audited_as_the_api_key_s(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    pending = refund_sent_too_late(app, client, auth, transaction, standin, monkeypatch)
    assert pending.status_code == 503
    db.session.expire_all()
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    key = db.session.execute(db.select(ApiKey)).scalar_one()
    assert pending_audits() == [
        (
            None,
            f"API key #{key.id}",
            "payment",
            payment.public_id,
            {
                "wallet_refund_id": attempt.id,
                "amount": "100.00",
                "reason": "late",
                "wallet": "bKash",
            },
        )
    ]


@contextmanager
def writes_and_commits():
    """The tables written to and the commits, in order, while the block runs."""
    seen = []

    def statement(conn, cursor, text, *args):
        words = text.split()
        verb = words[0].upper()
        if verb in ("INSERT", "UPDATE", "DELETE"):
            seen.append(words[1] if verb == "UPDATE" else words[2])

    def commit(conn):
        seen.append("COMMIT")

    event.listen(db.engine, "before_cursor_execute", statement)
    event.listen(db.engine, "commit", commit)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", statement)
        event.remove(db.engine, "commit", commit)


def after_the_attempt(seen):
    """What was written from the pending attempt on."""
    return seen[seen.index("wallet_refunds") :]


def test_the_attempt_commits_before_bkash_is_called_and_its_audit_row_with_the_answer(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    with writes_and_commits() as seen:
        pending = refund_sent_too_late(app, client, auth, transaction, standin, monkeypatch)
    assert pending.status_code == 503
    assert after_the_attempt(seen) == ["wallet_refunds", "COMMIT", "audit_logs", "COMMIT"], seen
