"""A staff member's refunds of one payment are held to the limit in total, also when they race."""

import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from gateway.domain_errors import DomainError, NotPermitted
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Refund
from gateway.payments.refunds import create_refund, refunded_by_user
from tests.factories import UserFactory, completed_payment
from tests.sms.test_matching_concurrency import race

LIMIT = Decimal("100.00")


@pytest.fixture
def clerk(brand):
    return UserFactory(brand=brand, email="clerk@shop.test")


@pytest.fixture
def paid(brand):
    return completed_payment(brand=brand, amount=Decimal("1000.00"))


def committed_refunds(payment):
    """The amounts of the payment's refunds as committed, with who recorded each."""
    db.session.expire_all()
    transaction = db.session.get(Payment, payment.id).transaction
    return sorted(
        (refund.amount, refund.refunded_by_id)
        for refund in db.session.execute(
            db.select(Refund).where(Refund.transaction_id == transaction.id)
        ).scalars()
    )


def test_refunds_one_after_another_stop_at_the_limit_in_total(brand, clerk, paid):
    trx_id = paid.transaction.trx_id
    create_refund(brand, trx_id, Decimal("60.00"), refunded_by=clerk.id, limit=LIMIT)
    with pytest.raises(NotPermitted) as refused:
        create_refund(brand, trx_id, Decimal("40.01"), refunded_by=clerk.id, limit=LIMIT)
    assert refused.value.errors[0]["field"] == "amount"
    assert "already refunded 60.00 BDT" in refused.value.message
    create_refund(brand, trx_id, Decimal("40.00"), refunded_by=clerk.id, limit=LIMIT)
    assert refunded_by_user(paid.transaction.id, clerk.id) == LIMIT
    assert committed_refunds(paid) == [(Decimal("40.00"), clerk.id), (Decimal("60.00"), clerk.id)]
    # The API's refunds (no panel user) and another user's are not this clerk's.
    create_refund(brand, trx_id, Decimal("300.00"))
    assert refunded_by_user(paid.transaction.id, clerk.id) == LIMIT


@pytest.mark.parametrize("racers", [2, 6])
def test_racing_refunds_by_one_staff_member_never_pass_the_limit(app, brand, clerk, paid, racers):
    trx_id, clerk_id = paid.transaction.trx_id, clerk.id

    def refund():
        brand_now = db.session.get(type(brand), brand.id)
        return create_refund(brand_now, trx_id, LIMIT, refunded_by=clerk_id, limit=LIMIT)

    results = race(app, [refund] * racers)

    refused = [result for result in results if isinstance(result, DomainError)]
    assert len(refused) == racers - 1
    assert all(
        isinstance(error, NotPermitted) and error.errors[0]["field"] == "amount"
        for error in refused
    )
    assert committed_refunds(paid) == [(LIMIT, clerk_id)]
    payment = db.session.get(Payment, paid.id)
    assert (payment.amount_refunded, payment.transaction.amount_refunded) == (LIMIT, LIMIT)
