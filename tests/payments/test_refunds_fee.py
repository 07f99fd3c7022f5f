"""Refunds of a payment that carried a method fee: never more than what was paid; the fee is
refunded only where the brand says so (brands.refund_fee)."""

from decimal import Decimal

import pytest
from sqlalchemy.exc import IntegrityError

from gateway.domain_errors import RefundExceedsRemaining
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Transaction
from gateway.payments.refunds import create_refund
from tests.factories import completed_payment
from tests.payments.test_refunds import amounts_of, post_refund, refund_count

FEE = Decimal("18.50")


@pytest.fixture
def paid(brand):
    """A ৳1,000 payment paid with a ৳18.50 fee: the customer sent ৳1,018.50."""
    return completed_payment(brand=brand, amount=Decimal("1000.00"), fee=FEE)


def refunding_fees(brand, on=True):
    brand.refund_fee = on
    db.session.commit()


def test_the_transaction_records_the_fee_its_customer_paid(paid):
    assert (paid.amount_paid, paid.transaction.amount, paid.transaction.fee) == (
        Decimal("1018.50"),
        Decimal("1000.00"),
        FEE,
    )


def test_without_refund_fee_a_refund_returns_at_most_the_amount(client, auth, brand, paid):
    trx_id = paid.transaction.trx_id

    too_much = post_refund(client, auth, {"trx_id": trx_id, "amount": "1000.01"})
    assert too_much.status_code == 422
    assert too_much.get_json()["code"] == "REFUND_EXCEEDS_REMAINING"
    assert "1000.00 BDT remains" in too_much.get_json()["message"]

    whole = post_refund(client, auth, {"trx_id": trx_id})
    assert whole.status_code == 201 and whole.get_json()["data"]["amount"] == "1000.00"
    assert amounts_of(paid) == ("refunded", Decimal("1000.00"), "refunded", Decimal("1000.00"))
    assert refund_count() == 1


def test_turning_refund_fee_on_reopens_no_refunded_payment(client, auth, brand, paid):
    """Refunded in full without its fee, then the brand starts refunding fees: the payment stays
    refunded, and says nothing remains rather than offer a fee it would then refuse."""
    assert post_refund(client, auth, {"trx_id": paid.transaction.trx_id}).status_code == 201
    refunding_fees(brand)

    fee = post_refund(client, auth, {"trx_id": paid.transaction.trx_id, "amount": "18.50"})

    assert fee.status_code == 422 and fee.get_json()["code"] == "REFUND_EXCEEDS_REMAINING"
    assert "Only 0.00 BDT remains" in fee.get_json()["message"]
    assert amounts_of(paid) == ("refunded", Decimal("1000.00"), "refunded", Decimal("1000.00"))
    assert refund_count() == 1


def test_turning_refund_fee_off_leaves_nothing_below_zero_to_refund(brand, paid):
    refunding_fees(brand)
    create_refund(brand, paid.transaction.trx_id, Decimal("1010.00"))  # the fee partly refunded
    refunding_fees(brand, on=False)

    with pytest.raises(RefundExceedsRemaining) as refused:
        create_refund(brand, paid.transaction.trx_id, Decimal("0.01"))

    assert "Only 0.00 BDT remains" in refused.value.message


def test_with_refund_fee_a_full_refund_returns_what_the_customer_sent(client, auth, brand, paid):
    refunding_fees(brand)

    whole = post_refund(client, auth, {"trx_id": paid.transaction.trx_id})

    assert whole.status_code == 201 and whole.get_json()["data"]["amount"] == "1018.50"
    assert amounts_of(paid) == ("refunded", Decimal("1018.50"), "refunded", Decimal("1018.50"))


def test_with_refund_fee_partial_refunds_reach_the_fee_and_no_further(brand, paid):
    refunding_fees(brand)
    trx_id = paid.transaction.trx_id

    create_refund(brand, trx_id, Decimal("1000.00"))
    assert amounts_of(paid)[0] == "partially_refunded"  # the fee is still refundable
    with pytest.raises(RefundExceedsRemaining) as refused:
        create_refund(brand, trx_id, Decimal("18.51"))
    assert "18.50 BDT remains" in refused.value.message
    create_refund(brand, trx_id, Decimal("18.50"))

    assert amounts_of(paid) == ("refunded", Decimal("1018.50"), "refunded", Decimal("1018.50"))
    with pytest.raises(RefundExceedsRemaining):
        create_refund(brand, trx_id, Decimal("0.01"))


def test_a_payment_in_another_currency_refunds_its_amount_only(brand):
    refunding_fees(brand)
    brand.currencies = "BDT,USD"
    usd = completed_payment(
        brand=brand,
        currency="USD",
        amount=Decimal("10.00"),
        amount_bdt=Decimal("1185.00"),
        exchange_rate=Decimal("118.5"),
        fee=Decimal("21.93"),
    )
    assert usd.transaction.fee == Decimal("0.00")  # its fee was taka; the refund is in USD

    with pytest.raises(RefundExceedsRemaining):
        create_refund(brand, usd.transaction.trx_id, Decimal("10.01"))
    create_refund(brand, usd.transaction.trx_id)

    assert amounts_of(usd) == ("refunded", Decimal("10.00"), "refunded", Decimal("10.00"))


@pytest.mark.parametrize("model", [Payment, Transaction])
def test_the_database_refuses_a_refund_beyond_amount_plus_fee(brand, paid, model):
    row_id = paid.id if model is Payment else paid.transaction.id
    table = model.__table__
    allowed = db.session.execute(
        db.update(table).where(table.c.id == row_id).values(amount_refunded=Decimal("1018.50"))
    )  # exactly amount + fee
    assert allowed.rowcount == 1
    db.session.rollback()

    with pytest.raises(IntegrityError):  # one paisa more, in the stored minor units
        db.session.execute(
            db.text(f"UPDATE {table.name} SET amount_refunded = 101851 WHERE id = :id"),
            {"id": row_id},
        )
    db.session.rollback()
