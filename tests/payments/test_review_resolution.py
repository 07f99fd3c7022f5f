"""A payment held for review with a real SMS: only the merchant settles it, and the SMS follows the
decision.
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.lifecycle import expire_due_payments
from gateway.payments.models.payment import Payment, Transaction
from gateway.payments.refunds import create_refund
from gateway.sms.hand_matching import match_sms_by_hand
from gateway.sms.matching import submit_claim
from gateway.sms.review import approve_review, reject_review
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, forward, reload

TRX = "8N7A6B5C4D"
CALLBACK = "https://merchant.example/hooks"
ODD_TEXT = "Dear customer, Tk 500 reached your wallet. Ref QX77PL12 thanks"


def transactions():
    return db.session.execute(db.select(Transaction)).scalars().all()


def events():
    return (
        db.session.execute(db.select(WebhookDelivery.event).order_by(WebhookDelivery.id))
        .scalars()
        .all()
    )


@pytest.fixture
def held(brand, phone):
    """A 500 payment the customer paid 400 for: the real SMS is bound to it in `review`."""
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"), callback_url=CALLBACK)
    submit_claim(payment, "bkash", TRX)
    sms = forward(phone, bkash_text("400.00", TRX))
    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.review_reason) == (
        "processing",
        "SMS amount 400.00 differs from 500.00",
    )
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    return payment, sms


def test_expiry_sweep_leaves_a_payment_held_for_review_to_the_merchant(brand, held):
    payment, sms = held
    open_one = PaymentFactory(brand=brand, callback_url=CALLBACK)
    waiting = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id="BK11AA22BB",
        callback_url=CALLBACK,
    )

    with freeze_time(utcnow() + timedelta(minutes=31)):
        expired = expire_due_payments()

    assert sorted(p.id for p in expired) == sorted([open_one.id, waiting.id])
    assert (reload(open_one).status, reload(waiting).status) == ("expired", "expired")
    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.review_reason) == (
        "processing",
        "SMS amount 400.00 differs from 500.00",
    )
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert events().count("payment.expired") == 2
    assert not db.session.execute(
        db.select(WebhookDelivery).where(
            WebhookDelivery.payment_id == payment.id, WebhookDelivery.event == "payment.expired"
        )
    ).first()


def test_a_payment_held_past_its_ttl_can_still_be_approved(held):
    payment, sms = held
    with freeze_time(utcnow() + timedelta(hours=2)):
        expire_due_payments()
        transaction = approve_review(reload(payment))
    assert (reload(payment).status, reload(sms).status) == ("completed", "matched")
    assert transactions() == [transaction]


def test_approving_a_review_marks_its_sms_matched_and_completes_once(held):
    payment, sms = held

    transaction = approve_review(payment)

    payment, sms = reload(payment), reload(sms)
    assert payment.status == "completed" and payment.completed_at is not None
    assert (sms.status, sms.payment_id) == ("matched", payment.id)
    [only] = transactions()
    assert (only.id, only.payment_id, only.provider_trx_id, only.amount) == (
        transaction.id,
        payment.id,
        TRX,
        Decimal("500.00"),
    )
    assert events() == ["payment.completed"]


def test_a_review_cannot_be_approved_twice(held):
    payment, _ = held
    approve_review(payment)
    with pytest.raises(DomainError) as refused:
        approve_review(reload(payment))
    assert (http_status(refused.value), refused.value.code) == (409, "INVALID_STATE")
    assert len(transactions()) == 1 and events() == ["payment.completed"]


def test_rejecting_a_review_fails_the_payment_and_releases_its_sms(held):
    payment, sms = held

    reject_review(payment, "Paid 400, not 500")

    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.review_reason) == ("failed", "Paid 400, not 500")
    assert (sms.status, sms.payment_id, sms.review_reason, sms.matched_at) == (
        "unmatched",
        None,
        None,
        None,
    )
    assert transactions() == [] and events() == ["payment.failed"]


def test_an_sms_released_by_a_rejection_can_be_matched_by_hand_to_the_right_payment(brand, held):
    payment, sms = held
    reject_review(payment, None)
    right = PaymentFactory(brand=brand, amount=Decimal("400.00"), callback_url=CALLBACK)

    transaction = match_sms_by_hand(reload(sms), right)

    right, sms = reload(right), reload(sms)
    assert right.status == "completed" and (sms.status, sms.payment_id) == ("matched", right.id)
    assert reload(payment).status == "failed"
    assert [t.id for t in transactions()] == [transaction.id] and transaction.payment_id == right.id


def test_a_payment_whose_trx_id_paid_another_payment_cannot_be_approved(brand, phone):
    now = utcnow()
    rival = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id=TRX,
        claimed_at=now,
        callback_url=CALLBACK,
    )
    winner = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id=TRX,
        claimed_at=now - timedelta(seconds=5),
        callback_url=CALLBACK,
    )
    sms = forward(phone, bkash_text("500.00", TRX))
    rival = reload(rival)
    assert rival.review_reason == f"TrxID {TRX} paid another payment ({winner.public_id})"
    before = events()

    with pytest.raises(DomainError) as refused:
        approve_review(rival)

    assert (http_status(refused.value), refused.value.code) == (409, "INVALID_STATE")
    rival = reload(rival)
    assert (rival.status, rival.review_reason) == (
        "processing",
        f"TrxID {TRX} paid another payment ({winner.public_id})",
    )
    assert (reload(sms).status, reload(sms).payment_id) == ("matched", winner.id)
    assert len(transactions()) == 1 and events() == before


def test_a_held_sms_whose_trx_id_then_paid_another_payment_cannot_be_approved(brand, phone, held):
    """A rival claim of the same TrxID completed by hand with another text: the held SMS must not
    pay again.
    """
    payment, sms = held
    rival = PaymentFactory(
        brand=brand,
        amount=Decimal("500.00"),
        status="processing",
        provider="bkash",
        provider_trx_id=TRX,
        claimed_at=utcnow(),
        callback_url=CALLBACK,
    )
    match_sms_by_hand(forward(phone, ODD_TEXT), rival)
    assert reload(rival).provider_trx_id == TRX and reload(rival).status == "completed"
    before = events()

    with pytest.raises(DomainError) as refused:
        approve_review(reload(payment))

    assert (http_status(refused.value), refused.value.code) == (409, "INVALID_STATE")
    assert reload(payment).status == "processing"
    assert (reload(sms).status, reload(sms).payment_id) == ("review", payment.id)
    assert len(transactions()) == 1 and events() == before


@pytest.mark.parametrize(
    "resolve", [approve_review, lambda p: reject_review(p, "no")], ids=["approve", "reject"]
)
def test_a_payment_not_in_review_is_left_alone(brand, resolve):
    waiting = PaymentFactory(
        brand=brand, status="processing", provider="bkash", provider_trx_id="BK55CC66DD"
    )
    with pytest.raises(DomainError) as refused:
        resolve(waiting)
    assert refused.value.message == "This payment is not waiting for review."
    assert reload(waiting).status == "processing" and transactions() == []


def test_approving_a_review_payment_cancelled_meanwhile_changes_nothing(held):
    payment, sms = held
    db.session.execute(
        db.update(Payment).where(Payment.id == payment.id).values(status="cancelled")
    )
    db.session.commit()
    with pytest.raises(DomainError):
        approve_review(reload(payment))
    assert (reload(sms).status, reload(sms).payment_id) == ("review", payment.id)
    assert transactions() == []


def test_cancelling_a_payment_held_for_review_releases_its_sms_to_be_matched_by_hand(
    client, auth, brand, held
):
    payment, sms = held

    response = client.post(f"/api/v1/payments/{payment.public_id}/cancel", headers=auth)

    assert response.status_code == 200 and response.json["data"]["status"] == "cancelled"
    payment, sms = reload(payment), reload(sms)
    assert payment.status == "cancelled"
    assert (sms.status, sms.payment_id, sms.review_reason, sms.matched_at) == (
        "unmatched",
        None,
        None,
        None,
    )
    assert transactions() == [] and events() == ["payment.cancelled"]

    right = PaymentFactory(brand=brand, amount=Decimal("400.00"), callback_url=CALLBACK)
    transaction = match_sms_by_hand(sms, right)

    right, sms = reload(right), reload(sms)
    assert right.status == "completed" and (sms.status, sms.payment_id) == ("matched", right.id)
    assert reload(payment).status == "cancelled"
    assert [t.id for t in transactions()] == [transaction.id] and transaction.payment_id == right.id


@pytest.mark.parametrize(
    "sent, fee",
    [("1000.00", "0.00"), ("1010.00", "10.00")],
    ids=["the-amount-alone", "part-of-the-fee"],
)
def test_an_approved_short_text_records_only_the_fee_that_came(brand, phone, sent, fee):
    """৳1,000 claimed with an ৳18.50 fee (৳1,018.50 asked), less sent, and the merchant approves:
    the fee recorded is what came beyond the amount, so a refund with the fee (refund_fee) never
    returns taka that never came."""
    brand.refund_fee = True
    db.session.commit()
    payment = PaymentFactory(brand=brand, amount=Decimal("1000.00"))
    submit_claim(payment, "bkash", TRX, fee=Decimal("18.50"))
    forward(phone, bkash_text(sent, TRX))
    assert reload(payment).review_reason.startswith("SMS amount")

    approve_review(reload(payment))

    paid = reload(payment)
    assert (paid.status, paid.fee, paid.amount_paid, paid.transaction.fee) == (
        "completed",
        Decimal(fee),
        Decimal("1000.00") + Decimal(fee),
        Decimal(fee),
    )
    refund = create_refund(brand, paid.transaction.trx_id)
    assert refund.amount == Decimal("1000.00") + Decimal(fee)
