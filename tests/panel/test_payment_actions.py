"""Refund, cancel, approve and reject from the payment page: the API's rules, the rows, and the
audit log.
"""

import html
import re
from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.payment import Refund, Transaction
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, completed_payment
from tests.factories import forward_from as forward
from tests.panel.conftest import audit_actions, post_form, reloaded


def refunds_of(payment):
    """Amounts refunded on a payment's transaction, oldest first."""
    return [
        refund.amount
        for refund in db.session.execute(
            db.select(Refund)
            .join(Transaction)
            .where(Transaction.payment_id == payment.id)
            .order_by(Refund.id)
        ).scalars()
    ]


CONFIRM_FORM = re.compile(r'<form[^>]*class="refund-confirm".*?</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)">')


def refund(client, payment, data, follow_redirects=False):
    """Refund as a person in the panel does: fill the form, then press the confirmation's button.

    A refusal at the first step (bad amount, nothing left) is returned as it came, without
    confirming.
    """
    url = f"/panel/payments/{payment.public_id}/refund"
    first = post_form(client, url, data)
    confirmation = CONFIRM_FORM.search(first.get_data(as_text=True))
    if first.status_code != 200 or confirmation is None:
        return first
    fields = {name: html.unescape(value) for name, value in HIDDEN.findall(confirmation.group(0))}
    assert fields["confirmed"] == "y" and fields["csrf_token"]
    return client.post(url, data=fields, follow_redirects=follow_redirects)


@pytest.fixture
def review(brand):
    """A payment held because the SMS amount did not match: a real SMS of 450 bound to it in
    `review`.
    """
    payment = PaymentFactory(
        brand=brand, amount=Decimal("500.00"), callback_url="https://merchant.example/hooks"
    )
    submit_claim(payment, "bkash", "BK12AB34CD")
    sms = forward(brand, bkash_text("450.00", "BK12AB34CD"))
    assert (reloaded(sms).status, sms.payment_id) == ("review", payment.id)
    assert reloaded(payment).review_reason == "SMS amount 450.00 differs from 500.00"
    return payment


def test_a_partial_refund_is_recorded_and_audited(as_staff, brand, staff):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    response = refund(
        as_staff, payment, {"amount": "120.50", "reason": "Late"}, follow_redirects=True
    )
    assert response.status_code == 200 and "Refunded ৳ 120.50." in response.get_data(as_text=True)
    assert refunds_of(payment) == [Decimal("120.50")]
    assert (reloaded(payment).status, payment.amount_refunded) == (
        "partially_refunded",
        Decimal("120.50"),
    )
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "payment.refund")
    ).scalar_one()
    assert (entry.user_id, entry.target_id, entry.details["amount"], entry.details["reason"]) == (
        staff.id,
        payment.public_id,
        "120.50",
        "Late",
    )


def test_an_empty_amount_refunds_everything_that_remains(as_staff, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    refund(as_staff, payment, {"amount": "200"})
    refund(as_staff, payment, {"amount": ""})
    assert refunds_of(payment) == [Decimal("200.00"), Decimal("300.00")]
    assert reloaded(payment).status == "refunded"


def test_a_refund_larger_than_what_remains_is_refused_beside_the_amount(as_staff, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    refund(as_staff, payment, {"amount": "400"})
    response = refund(as_staff, payment, {"amount": "100.01"})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert f"Only 100.00 BDT remains refundable on {payment.transaction.trx_id}." in html
    assert 'id="amount-error"' in html and 'aria-invalid="true"' in html
    assert refunds_of(payment) == [Decimal("400.00")]


@pytest.mark.parametrize(
    "amount, message",
    [
        ("abc", "Enter an amount such as 250 or 250.50."),
        ("1.234", "Enter an amount such as 250 or 250.50."),
        ("0", "Amount must be greater than zero."),
        ("-5", "Enter an amount such as 250 or 250.50."),
    ],
)
def test_a_malformed_refund_amount_is_refused_by_the_form(as_staff, brand, amount, message):
    payment = completed_payment(brand=brand)
    response = refund(as_staff, payment, {"amount": amount})
    assert response.status_code == 422 and message in response.get_data(as_text=True)
    assert refunds_of(payment) == []


def test_an_unpaid_payment_cannot_be_refunded(as_staff, brand):
    payment = PaymentFactory(brand=brand)
    response = refund(as_staff, payment, {"amount": "10"})
    assert response.status_code == 409
    assert "Only a completed payment can be refunded." in response.get_data(as_text=True)
    assert db.session.execute(db.select(db.func.count()).select_from(Refund)).scalar() == 0


def test_cancelling_an_open_payment(as_staff, brand, staff):
    payment = PaymentFactory(brand=brand)
    response = post_form(
        as_staff, f"/panel/payments/{payment.public_id}/cancel", follow_redirects=True
    )
    assert "The payment is cancelled." in response.get_data(as_text=True)
    assert reloaded(payment).status == "cancelled" and payment.cancelled_at is not None
    assert audit_actions(brand)[-1] == ("payment.cancel", staff.email, payment.public_id)


def test_a_completed_payment_cannot_be_cancelled(as_staff, brand):
    payment = completed_payment(brand=brand)
    response = post_form(
        as_staff, f"/panel/payments/{payment.public_id}/cancel", follow_redirects=True
    )
    assert "A completed payment cannot be cancelled." in response.get_data(as_text=True)
    assert reloaded(payment).status == "completed"
    assert "payment.cancel" not in [action for action, _, _ in audit_actions(brand)]


def test_approving_a_payment_in_review_completes_it_with_a_transaction(
    as_staff, brand, staff, review
):
    response = post_form(
        as_staff, f"/panel/payments/{review.public_id}/approve", follow_redirects=True
    )
    assert "Approved: the payment is completed." in response.get_data(as_text=True)
    assert reloaded(review).status == "completed" and review.transaction is not None
    assert review.transaction.provider_trx_id == "BK12AB34CD"
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "payment.approve")
    ).scalar_one()
    assert entry.details == {
        "trx_id": review.transaction.trx_id,
        "review_reason": "SMS amount 450.00 differs from 500.00",
    }
    timeline = as_staff.get(f"/panel/payments/{review.public_id}").get_data(as_text=True)
    assert "Approved after review" in timeline and f"by {staff.email}" in timeline


def test_rejecting_a_payment_in_review_fails_it(as_staff, brand, staff, review):
    response = post_form(
        as_staff,
        f"/panel/payments/{review.public_id}/reject",
        {"reason": "No money arrived"},
        follow_redirects=True,
    )
    assert "Rejected: the payment is marked failed." in response.get_data(as_text=True)
    assert (reloaded(review).status, review.review_reason) == ("failed", "No money arrived")
    assert audit_actions(brand)[-1] == ("payment.reject", staff.email, review.public_id)


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_only_a_payment_in_review_can_be_approved_or_rejected(as_staff, brand, action):
    waiting = PaymentFactory(
        brand=brand, status="processing", provider="bkash", provider_trx_id="BK55CC66DD"
    )
    response = post_form(
        as_staff, f"/panel/payments/{waiting.public_id}/{action}", follow_redirects=True
    )
    assert "This payment is not waiting for review." in response.get_data(as_text=True)
    assert reloaded(waiting).status == "processing" and waiting.transaction is None


def test_a_payment_approved_meanwhile_cannot_be_approved_twice(as_staff, brand, review):
    post_form(as_staff, f"/panel/payments/{review.public_id}/approve")
    response = post_form(
        as_staff, f"/panel/payments/{review.public_id}/approve", follow_redirects=True
    )
    assert "This payment is not waiting for review." in response.get_data(as_text=True)
    assert db.session.execute(db.select(db.func.count()).select_from(Transaction)).scalar() == 1


@pytest.mark.parametrize(
    "action, data", [("refund", {"amount": "10"}), ("cancel", {}), ("approve", {}), ("reject", {})]
)
def test_actions_on_another_brand_s_payment_read_as_not_found(as_admin, other_brand, action, data):
    theirs = PaymentFactory(
        brand=other_brand,
        status="processing",
        provider="bkash",
        provider_trx_id="XX11YY22ZZ",
        review_reason="SMS amount differs",
    )
    response = post_form(as_admin, f"/panel/payments/{theirs.public_id}/{action}", data)
    assert response.status_code == 404
    assert reloaded(theirs).status == "processing"
    assert (
        db.session.execute(db.select(AuditLog).where(AuditLog.action.like("payment.%"))).first()
        is None
    )


def held_sms_of(payment):
    return db.session.execute(
        db.select(InboundSms)
        .where(InboundSms.provider_trx_id == payment.provider_trx_id)
        .execution_options(populate_existing=True)
    ).scalar_one()


def test_approving_from_the_panel_marks_the_held_sms_matched_and_sends_one_completion(
    as_staff, review
):
    post_form(as_staff, f"/panel/payments/{review.public_id}/approve")
    sms = held_sms_of(review)
    assert (reloaded(review).status, sms.status, sms.payment_id) == (
        "completed",
        "matched",
        review.id,
    )
    assert db.session.execute(db.select(db.func.count()).select_from(Transaction)).scalar() == 1
    assert db.session.execute(db.select(WebhookDelivery.event)).scalars().all() == [
        "payment.completed"
    ]


def test_rejecting_from_the_panel_releases_the_held_sms(as_staff, review):
    post_form(as_staff, f"/panel/payments/{review.public_id}/reject", {"reason": "Paid short"})
    sms = held_sms_of(review)
    assert reloaded(review).status == "failed"
    assert (sms.status, sms.payment_id) == ("unmatched", None)


def test_a_payment_whose_trx_id_paid_another_cannot_be_approved_from_the_panel(as_staff, brand):
    now = utcnow()
    rival = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id="BK77EE88FF",
        claimed_at=now,
    )
    winner = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id="BK77EE88FF",
        claimed_at=now - timedelta(seconds=5),
    )
    forward(brand, bkash_text("500.00", "BK77EE88FF"))
    assert (
        reloaded(rival).review_reason
        == f"TrxID BK77EE88FF paid another payment ({winner.public_id})"
    )

    response = post_form(
        as_staff, f"/panel/payments/{rival.public_id}/approve", follow_redirects=True
    )

    assert "No SMS is held for this payment" in response.get_data(as_text=True)
    assert (reloaded(rival).status, rival.transaction) == ("processing", None)
    assert held_sms_of(rival).payment_id == winner.id
    assert db.session.execute(db.select(db.func.count()).select_from(Transaction)).scalar() == 1
    assert "payment.approve" not in [action for action, _, _ in audit_actions(brand)]
