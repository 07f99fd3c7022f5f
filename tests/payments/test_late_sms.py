"""Money that arrives after its payment was cancelled or expired: held for review, then completed or
returned, once.
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.devices.models.notification import Notification
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.dashboard import dashboard_summary
from gateway.payments.lifecycle import cancel_payment, expire_due_payments
from gateway.payments.models.payment import Payment, Transaction
from gateway.sms.late_money import complete_late_payment, late_sms, return_late_sms
from gateway.sms.matching import match_sms_to_claim, submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.review import needs_review
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, forward, reload
from tests.sms.test_matching_concurrency import race

TRX = "8N7A6B5C4D"
CALLBACK = "https://merchant.example/hooks"


def events_of(payment):
    return (
        db.session.execute(
            db.select(WebhookDelivery.event)
            .where(WebhookDelivery.payment_id == payment.id)
            .order_by(WebhookDelivery.id)
        )
        .scalars()
        .all()
    )


def transactions():
    return db.session.execute(db.select(Transaction)).scalars().all()


def claimed(brand, amount="500.00"):
    """A payment whose customer said "I have paid" with TRX, the SMS not here yet."""
    payment = PaymentFactory(brand=brand, amount=Decimal(amount), callback_url=CALLBACK)
    submit_claim(payment, "bkash", TRX)
    return reload(payment)


@pytest.fixture
def cancelled_then_paid(brand, phone):
    """The customer claimed, cancelled, and then bKash's SMS came in through the companion app's
    ingest.
    """
    payment = claimed(brand)
    cancel_payment(payment)
    sms = forward(phone, bkash_text("500.00", TRX, "01712345678"))
    return reload(payment), reload(sms)


def test_an_sms_for_a_cancelled_claim_is_held_on_that_payment_for_review(
    brand, cancelled_then_paid
):
    payment, sms = cancelled_then_paid

    assert (payment.status, payment.review_reason) == (
        "cancelled",
        "Paid after the payment was cancelled",
    )
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert sms.review_reason == "Paid after the payment was cancelled"
    assert late_sms(payment).id == sms.id
    assert transactions() == [] and events_of(payment) == ["payment.cancelled"]
    waiting = db.session.execute(
        db.select(Payment.id).where(Payment.brand_id == brand.id, needs_review())
    ).scalars()
    assert list(waiting) == [payment.id]
    [note] = (
        db.session.execute(db.select(Notification).where(Notification.kind == "payment.review"))
        .scalars()
        .all()
    )
    assert (note.kind, note.body) == ("payment.review", "Paid after the payment was cancelled")


def test_an_sms_for_an_expired_claim_with_another_amount_says_both(brand, phone):
    with freeze_time(utcnow()) as frozen:
        payment = claimed(brand)
        frozen.tick(timedelta(minutes=31))
        expire_due_payments()
        sms = forward(phone, bkash_text("450.00", TRX))

    payment, sms = reload(payment), reload(sms)
    reason = "Paid after the payment expired; SMS amount 450.00 differs from 500.00"
    assert (payment.status, payment.review_reason) == ("expired", reason)
    assert (sms.status, sms.payment_id) == ("review", payment.id)


def test_completing_a_late_payment_completes_it_once_with_its_webhook(brand, cancelled_then_paid):
    payment, sms = cancelled_then_paid

    transaction = complete_late_payment(payment)

    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.provider_trx_id, payment.sender_number) == (
        "completed",
        TRX,
        "01712345678",
    )
    assert (sms.status, sms.payment_id) == ("matched", payment.id)
    assert [t.id for t in transactions()] == [transaction.id] and transaction.amount == Decimal(
        "500.00"
    )
    assert events_of(payment) == ["payment.cancelled", "payment.completed"]
    with pytest.raises(DomainError) as twice:
        complete_late_payment(payment)
    assert (http_status(twice.value), twice.value.code) == (409, "INVALID_STATE")
    assert len(transactions()) == 1 and events_of(payment) == [
        "payment.cancelled",
        "payment.completed",
    ]


def test_returning_late_money_keeps_the_payment_cancelled_and_the_books_untouched(
    brand, cancelled_then_paid
):
    payment, sms = cancelled_then_paid
    before = dashboard_summary(brand)

    return_late_sms(payment)

    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.amount_refunded, payment.transaction) == (
        "cancelled",
        Decimal("0.00"),
        None,
    )
    assert payment.review_reason == "Returned to the customer. Paid after the payment was cancelled"
    assert (sms.status, sms.payment_id, sms.review_reason) == (
        "returned",
        payment.id,
        "Returned to the customer",
    )
    assert (
        late_sms(payment) is None
        and transactions() == []
        and events_of(payment) == ["payment.cancelled"]
    )
    after = dashboard_summary(brand)
    for volume in ("completed_volume", "refunded_volume", "net_volume"):
        assert after[volume] == before[volume]
    assert not db.session.execute(db.select(Payment.id).where(needs_review())).first()


@pytest.mark.parametrize(
    "first, second",
    [(complete_late_payment, return_late_sms), (return_late_sms, complete_late_payment)],
    ids=["complete", "return"],
)
def test_once_settled_a_late_sms_cannot_be_settled_the_other_way(
    cancelled_then_paid, first, second
):
    payment, sms = cancelled_then_paid
    first(payment)
    settled = (reload(payment).status, reload(sms).status)

    with pytest.raises(DomainError) as refused:
        second(reload(payment))

    assert refused.value.code == "INVALID_STATE"
    assert (reload(payment).status, reload(sms).status) == settled
    assert len(transactions()) == (1 if first is complete_late_payment else 0)


@pytest.mark.parametrize(
    "settle", [complete_late_payment, return_late_sms], ids=["complete", "return"]
)
def test_a_payment_without_late_money_cannot_be_settled_as_late(brand, settle):
    cancelled = cancel_payment(claimed(brand))
    with pytest.raises(DomainError) as refused:
        settle(cancelled)
    assert refused.value.code == "INVALID_STATE"
    assert reload(cancelled).status == "cancelled" and transactions() == []


def test_an_sms_released_by_cancelling_a_review_is_not_held_again(client, auth, brand, phone):
    """The merchant cancelled a payment held for review: its SMS arrived before the cancel, so it is
    not late.
    """
    payment = claimed(brand)
    sms = forward(phone, bkash_text("450.00", TRX))
    assert reload(sms).status == "review"
    assert (
        client.post(f"/api/v1/payments/{payment.public_id}/cancel", headers=auth).status_code == 200
    )

    assert match_sms_to_claim(reload(sms)) is None  # as a re-matching job would try it again

    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)
    assert (
        reload(payment).review_reason == "SMS amount 450.00 differs from 500.00"
    )  # not made a late one


def test_a_new_claim_of_the_same_trx_id_takes_the_sms_before_the_cancelled_one(brand, phone):
    old = cancel_payment(claimed(brand))
    again = claimed(brand)

    sms = forward(phone, bkash_text("500.00", TRX))

    assert (reload(again).status, reload(sms).payment_id) == ("completed", again.id)
    assert (reload(old).status, reload(old).review_reason) == ("cancelled", None)


def test_a_late_sms_whose_trx_id_paid_another_payment_cannot_complete_its_own(
    brand, cancelled_then_paid
):
    payment, sms = cancelled_then_paid
    other = PaymentFactory(brand=brand, status="completed", provider="bkash", provider_trx_id=TRX)

    with pytest.raises(DomainError) as refused:
        complete_late_payment(payment)

    assert "already paid another payment" in refused.value.message
    assert (reload(payment).status, reload(sms).status) == ("cancelled", "review")
    assert reload(other).status == "completed"


def test_racing_completions_and_returns_settle_a_late_sms_exactly_once(app, cancelled_then_paid):
    payment, sms = cancelled_then_paid

    def complete():
        return complete_late_payment(db.session.get(Payment, payment.id))

    def give_back():
        return return_late_sms(db.session.get(Payment, payment.id))

    results = race(app, [complete, give_back] * 4)

    winners = [result for result in results if not isinstance(result, DomainError)]
    assert len(winners) == 1
    assert all(
        result.code == "INVALID_STATE" for result in results if isinstance(result, DomainError)
    )
    payment, sms = reload(payment), reload(sms)
    if isinstance(winners[0], Transaction):
        assert (payment.status, sms.status, len(transactions())) == ("completed", "matched", 1)
        assert events_of(payment).count("payment.completed") == 1
    else:
        assert (payment.status, sms.status, transactions()) == ("cancelled", "returned", [])
    assert db.session.execute(db.select(db.func.count()).select_from(InboundSms)).scalar_one() == 1
