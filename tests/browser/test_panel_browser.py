"""A shop owner in Chromium: signs in, settles a payment held for review, refunds part of
another."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.payments.models.payment import Refund
from tests.browser.panel_support import (  # noqa: F401 - window and owner are fixtures
    owner,
    payment_in_review,
    screenshot,
    shop_history,
    sign_in,
    window,
)
from tests.checkout_helpers import reloaded
from tests.factories import completed_payment

pytestmark = pytest.mark.browser


def test_the_owner_signs_in_sees_the_dashboard_and_signs_out(live_url, brand, owner, window):
    shop_history(brand)
    payment_in_review(brand)
    page = window()
    page.goto(f"{live_url}/panel/payments")
    expect(page).to_have_url(f"{live_url}/panel/sign-in?next=%2Fpanel%2Fpayments")
    screenshot(page, "sign-in", full_page=False)
    page.get_by_label("E-mail").fill(owner.email)
    page.get_by_label("Password").fill("not my password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("The e-mail or password is not correct.")).to_be_visible()
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Payments", exact=True)).to_be_visible()
    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_text("1 payment is waiting for review")).to_be_visible()
    expect(page.locator("svg.chart rect.bar")).to_have_count(30)
    screenshot(page, "dashboard")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_text("You are signed out.")).to_be_visible()
    page.goto(f"{live_url}/panel/dashboard")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


def test_the_owner_approves_a_payment_held_for_review(live_url, brand, owner, window):
    held = payment_in_review(brand)
    page = window()
    sign_in(page, live_url, owner)
    page.get_by_role("link", name="1 payment is waiting for review").click()
    expect(page.get_by_role("cell", name="ORDER-2041")).to_be_visible()
    page.get_by_role("link", name="ORDER-2041").click()
    expect(page.get_by_role("heading", name="Waiting for your review")).to_be_visible()
    expect(page.get_by_text("SMS amount 450.00 differs from 500.00")).to_be_visible()
    screenshot(page, "payment-review")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Approve payment").click()
    expect(page.get_by_text("Approved: the payment is completed.")).to_be_visible()
    expect(page.locator(".amount-title .badge")).to_have_text("Completed")
    expect(page.get_by_text("Approved after review")).to_be_visible()
    assert reloaded(held).status == "completed" and held.transaction is not None
    assert (
        db.session.execute(
            db.select(AuditLog.user_id).where(AuditLog.action == "payment.approve")
        ).scalar_one()
        == owner.id
    )


def test_a_dismissed_confirmation_leaves_the_payment_in_review(live_url, brand, owner, window):
    held = payment_in_review(brand)
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/payments/{held.public_id}")
    page.get_by_label("Why (kept on the payment)").fill("No money on the statement")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Reject").click()
    expect(page.get_by_role("heading", name="Waiting for your review")).to_be_visible()
    assert reloaded(held).status == "processing"
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Reject").click()
    expect(page.get_by_text("Rejected: the payment is marked failed.")).to_be_visible()
    assert (reloaded(held).status, held.review_reason) == ("failed", "No money on the statement")


def test_the_owner_refunds_part_of_a_payment(live_url, brand, owner, window):
    paid = completed_payment(
        brand=brand, amount=Decimal("1250.00"), reference="ORDER-3001", customer_name="Sadia Islam"
    )
    page = window()
    sign_in(page, live_url, owner)
    page.get_by_role("link", name="Payments", exact=True).click()
    page.get_by_label("Search").fill("ORDER-3001")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("link", name="ORDER-3001").click()
    expect(page.get_by_text("৳ 1,250.00 can be refunded")).to_be_visible()
    page.get_by_label("Amount").fill("2000")
    page.get_by_role("button", name="Refund", exact=True).click()
    expect(
        page.get_by_text(f"Only 1250.00 BDT remains refundable on {paid.transaction.trx_id}.")
    ).to_be_visible()
    page.get_by_label("Amount").fill("300")
    page.get_by_label("Reason").fill("One item out of stock")
    page.get_by_role("button", name="Refund", exact=True).click()
    expect(page.get_by_text("Refund ৳ 300.00 to Sadia Islam?")).to_be_visible()
    assert (
        db.session.execute(db.select(Refund)).first() is None
    )  # nothing recorded before the confirmation
    page.get_by_role("button", name="Yes, record the refund").click()
    expect(page.get_by_text("Refunded ৳ 300.00.", exact=True)).to_be_visible()  # the flash
    expect(page.locator(".amount-title .badge")).to_have_text("Partly refunded")
    expect(page.get_by_text("৳ 950.00 can be refunded")).to_be_visible()
    expect(page.get_by_text("Refunded ৳ 300.00", exact=True)).to_be_visible()
    screenshot(page, "payment")
    refund = db.session.execute(db.select(Refund)).scalar_one()
    assert (refund.amount, refund.reason) == (Decimal("300.00"), "One item out of stock")
    assert reloaded(paid).amount_refunded == Decimal("300.00")
