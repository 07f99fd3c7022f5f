"""A customer in Chromium sees each method's amount, fee and total before choosing, sends the
chosen method's total, and the payment completes."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from tests.browser.test_checkout_browser import TRX_ID, forward_bkash_sms
from tests.checkout_helpers import reloaded
from tests.factories import PaymentFactory, PaymentMethodFactory

pytestmark = pytest.mark.browser


@pytest.fixture
def shop_with_fees(brand):
    """bKash at 1.85% and Nagad at a fixed ৳10."""
    bkash = PaymentMethodFactory(
        brand=brand, provider="bkash", number="01700000000", fee_percent=Decimal("1.85")
    )
    nagad = PaymentMethodFactory(
        brand=brand, provider="nagad", number="01811223344", fee_fixed=Decimal("10")
    )
    return bkash, nagad


def test_the_checkout_shows_fee_and_total_per_method_and_the_total_pays(
    live_url, brand, shop_with_fees, runner, new_page, screenshot
):
    bkash, nagad = shop_with_fees
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    page = new_page()
    page.goto(f"{live_url}/checkout/{payment.token}")

    bkash_line = page.locator(f'[data-method-fee="{bkash.id}"]')
    nagad_line = page.locator(f'[data-method-fee="{nagad.id}"]')
    # Both are readable before the customer opens either method.
    expect(bkash_line).to_be_visible()
    expect(nagad_line).to_be_visible()
    expect(bkash_line.locator("[data-fee]")).to_have_text("৳9.25")
    expect(bkash_line.locator("[data-fee-total]")).to_have_text("৳509.25")
    expect(nagad_line.locator("[data-fee]")).to_have_text("৳10.00")
    expect(nagad_line.locator("[data-fee-total]")).to_have_text("৳510.00")
    expect(page.get_by_text("Enter the amount 509.25.")).to_be_visible()
    screenshot(page, "fees")
    page.locator(f'[data-method-fee="{nagad.id}"]').click()  # open Nagad: its own total to type
    expect(page.get_by_text("Enter the amount 510.00.")).to_be_visible()

    page.get_by_label("Transaction ID (TrxID)").first.fill(TRX_ID)
    page.get_by_role("button", name="I have paid — verify").first.click()
    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()
    forward_bkash_sms(runner, amount="509.25")
    expect(page.get_by_role("heading", name="Payment received")).to_be_visible()
    stored = reloaded(payment)
    assert (stored.status, stored.fee, stored.amount_paid) == (
        "completed",
        Decimal("9.25"),
        Decimal("509.25"),
    )
