"""Refunds of payments bKash's API paid: made at bKash first (full and partial), recorded like any
refund with bKash's refund id; a refund bKash refuses is not recorded and says why."""

from decimal import Decimal

from gateway.extensions import db
from gateway.payments.models.payment import Refund, Transaction
from gateway.wallets.bkash import REFUND
from gateway.wallets.models import WalletPayment
from tests.checkout_helpers import payment, reloaded  # noqa: F401 - fixtures
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


def test_a_refund_when_bkash_is_down_is_not_recorded(client, auth, payment, bkash_api, standin):
    transaction = paid_transaction(client, payment, bkash_api)
    standin.__exit__()  # bKash unreachable
    refused = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )
    assert refused.status_code == 503
    assert refused.get_json()["code"] == "WALLET_UNAVAILABLE"
    assert db.session.execute(db.select(db.func.count()).select_from(Refund)).scalar() == 0


def test_a_refund_bkash_answers_too_late_says_it_may_have_been_made(
    app, client, auth, payment, bkash_api, standin, monkeypatch
):
    transaction = paid_transaction(client, payment, bkash_api)
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    standin.refund_delay = 2  # bKash refunds, but answers after our timeout
    unknown = client.post(
        f"{API}/refunds", json={"trx_id": transaction.trx_id, "amount": "100.00"}, headers=auth
    )
    assert unknown.status_code == 503
    body = unknown.get_json()
    assert body["code"] == "WALLET_TIMEOUT"
    assert "may have made it" in body["message"] and "before refunding again" in body["message"]
    assert db.session.execute(db.select(db.func.count()).select_from(Refund)).scalar() == 0
    assert standin.calls(REFUND) == 1
