"""The payment page of a cancelled or expired payment whose money came late: complete it or record
its return.
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.accounts.models.audit import AuditLog
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.lifecycle import cancel_payment, expire_due_payments
from gateway.payments.models.payment import Transaction
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, UserFactory, bkash_text, forward
from tests.fresh_catalogue import app_with_fresh_catalogue, dispose
from tests.panel.conftest import (
    audit_actions,
    csrf_token,
    panel_client,
    post_form,
    reloaded,
    sign_in,
)

TRX = "BK12AB34CD"


@pytest.fixture
def late(brand, phone):
    """Rahim said "I have paid", cancelled, and then bKash's SMS came in through the companion
    app."""
    payment = PaymentFactory(
        brand=brand,
        amount=Decimal("500.00"),
        customer_name="Rahim",
        callback_url="https://merchant.example/hooks",
    )
    submit_claim(payment, "bkash", TRX)
    cancel_payment(reloaded(payment))
    sms = forward(phone, bkash_text("500.00", TRX, "01712345678"))
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    return reloaded(payment)


def sms_of(payment):
    return db.session.execute(
        db.select(InboundSms)
        .where(InboundSms.provider_trx_id == TRX)
        .execution_options(populate_existing=True)
    ).scalar_one()


def count(model):
    return db.session.execute(db.select(db.func.count()).select_from(model)).scalar_one()


def test_the_payment_page_offers_complete_and_refund_for_late_money(as_staff, late):
    page = as_staff.get(f"/panel/payments/{late.public_id}").get_data(as_text=True)
    assert "Money arrived after this payment was cancelled" in page
    assert "৳ 500.00 from 01712345678, TrxID BK12AB34CD" in page
    assert f'action="/panel/payments/{late.public_id}/late/complete"' in page
    assert f'action="/panel/payments/{late.public_id}/late/return"' in page
    assert "Complete payment" in page and "Refund to customer" in page
    assert "Record that you sent ৳ 500.00 back to 01712345678?" in page


def test_completing_late_money_from_the_panel_completes_the_payment_and_tells_the_shop(
    as_staff, staff, brand, late
):
    response = post_form(
        as_staff, f"/panel/payments/{late.public_id}/late/complete", follow_redirects=True
    )

    assert "Completed: the payment is paid and your shop is told." in response.get_data(
        as_text=True
    )
    payment = reloaded(late)
    assert payment.status == "completed" and payment.transaction.provider_trx_id == TRX
    assert sms_of(payment).status == "matched"
    assert db.session.execute(
        db.select(WebhookDelivery.event).order_by(WebhookDelivery.id)
    ).scalars().all() == ["payment.cancelled", "payment.completed"]
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "payment.complete_late")
    ).scalar_one()
    assert (entry.user_id, entry.details["trx_id"]) == (staff.id, payment.transaction.trx_id)
    page = as_staff.get(f"/panel/payments/{late.public_id}").get_data(as_text=True)
    assert "Completed after late money arrived" in page and "late/complete" not in page


def test_recording_the_return_of_late_money_leaves_the_payment_cancelled(
    as_staff, staff, brand, late
):
    response = post_form(
        as_staff, f"/panel/payments/{late.public_id}/late/return", follow_redirects=True
    )

    html = response.get_data(as_text=True)
    assert "Recorded: the money was returned to the customer." in html
    payment = reloaded(late)
    assert (payment.status, payment.amount_refunded, payment.transaction) == (
        "cancelled",
        Decimal("0.00"),
        None,
    )
    assert sms_of(payment).status == "returned" and count(Transaction) == 0
    assert audit_actions(brand)[-1] == ("payment.return_late", staff.email, late.public_id)
    assert "Late money returned to the customer" in html and "late/return" not in html


@pytest.mark.parametrize("action", ["complete", "return"])
def test_a_second_click_is_refused_and_changes_nothing(as_staff, late, action):
    post_form(as_staff, f"/panel/payments/{late.public_id}/late/{action}")
    settled = (reloaded(late).status, sms_of(late).status)

    again = post_form(
        as_staff, f"/panel/payments/{late.public_id}/late/{action}", follow_redirects=True
    )

    assert (
        "No SMS that arrived after this payment was cancelled or expired is waiting."
        in again.get_data(as_text=True)
    )
    assert (reloaded(late).status, sms_of(late).status) == settled
    assert count(Transaction) == (1 if action == "complete" else 0)


def test_two_admins_settling_the_same_late_money_differently_settle_it_once(
    app, as_staff, brand, late
):
    """Both saw the page (and its tokens) before either pressed: the second press loses."""
    other = panel_client(app)
    sign_in(other, UserFactory(brand=brand, role="super_admin", email="second@shop.test"))
    mine, theirs = (
        csrf_token(as_staff, f"/panel/payments/{late.public_id}"),
        csrf_token(other, f"/panel/payments/{late.public_id}"),
    )

    as_staff.post(f"/panel/payments/{late.public_id}/late/return", data={"csrf_token": mine})
    lost = other.post(
        f"/panel/payments/{late.public_id}/late/complete",
        data={"csrf_token": theirs},
        follow_redirects=True,
    )

    assert (
        "No SMS that arrived after this payment was cancelled or expired is waiting."
        in lost.get_data(as_text=True)
    )
    assert (reloaded(late).status, sms_of(late).status, count(Transaction)) == (
        "cancelled",
        "returned",
        0,
    )


@pytest.mark.parametrize("action", ["complete", "return"])
def test_late_actions_need_the_csrf_token(as_staff, late, action):
    response = as_staff.post(f"/panel/payments/{late.public_id}/late/{action}")
    assert response.status_code in (302, 400)
    assert (reloaded(late).status, sms_of(late).status) == ("cancelled", "review")


@pytest.mark.parametrize("action", ["complete", "return"])
def test_late_actions_on_another_brand_s_payment_read_as_not_found(as_admin, other_brand, action):
    theirs = PaymentFactory(
        brand=other_brand, status="cancelled", provider="bkash", provider_trx_id=TRX
    )
    assert (
        post_form(as_admin, f"/panel/payments/{theirs.public_id}/late/{action}").status_code == 404
    )
    assert reloaded(theirs).status == "cancelled"


def test_late_money_is_in_the_review_queue_and_on_the_dashboard(as_staff, late):
    listed = as_staff.get("/panel/payments?status=review").get_data(as_text=True)
    assert late.public_id in listed
    post_form(as_staff, f"/panel/payments/{late.public_id}/late/return")
    assert late.public_id not in as_staff.get("/panel/payments?status=review").get_data(
        as_text=True
    )


def test_the_late_money_box_speaks_bangla(app, brand, staff, late, tmp_path):
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        client = panel_client(bangla)
        sign_in(client, staff)
        page = client.get(f"/panel/payments/{late.public_id}?lang=bn").get_data(as_text=True)
    finally:
        dispose(bangla)
    assert (
        "Money arrived after this payment was cancelled" not in page
        and "Complete payment" not in page
    )
    assert "পেমেন্টটি বাতিল হওয়ার পরে টাকা এসেছে" in page
    assert "পেমেন্ট সম্পন্ন করুন" in page and "গ্রাহককে টাকা ফেরত" in page


def test_money_for_an_expired_claim_is_completed_from_its_page(as_staff, brand, phone):
    with freeze_time(utcnow()) as frozen:
        payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
        submit_claim(payment, "bkash", TRX)
        frozen.tick(timedelta(minutes=31))
        expire_due_payments()
        forward(phone, bkash_text("500.00", TRX))
    assert reloaded(payment).status == "expired"

    page = as_staff.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
    assert "Money arrived after this payment expired" in page
    post_form(as_staff, f"/panel/payments/{payment.public_id}/late/complete")

    assert reloaded(payment).status == "completed" and sms_of(payment).status == "matched"
    assert count(Transaction) == 1
