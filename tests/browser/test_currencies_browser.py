"""Currencies in Chromium: an owner accepts USD at a rate on Settings → Currencies, and a USD
payment's checkout shows its dollars and the taka to send; kept as screenshots."""

import pytest
from playwright.sync_api import expect

from gateway.payments.lifecycle import create_payment
from tests.browser.conftest import screenshot as checkout_screenshot  # noqa: F401 - fixture
from tests.browser.panel_support import owner, screenshot, sign_in, window  # noqa: F401 - fixtures
from tests.factories import PaymentMethodFactory

pytestmark = pytest.mark.browser


def test_an_owner_sets_a_rate_and_the_checkout_shows_the_taka_to_send(
    live_url, brand, owner, window, new_page, checkout_screenshot
):
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/settings")
    page.get_by_role("link", name="Currencies and rates").click()
    expect(page.get_by_role("heading", name="Currencies", exact=True)).to_be_visible()
    expect(page.locator("#currency-USD")).to_contain_text("No rate")

    page.get_by_label("Currency", exact=True).fill("usd")
    page.get_by_label("Taka per unit").fill("121.50")
    page.get_by_role("button", name="Save rate").click()

    expect(page.locator(".flash-success")).to_contain_text("USD: 121.5 taka per unit.")
    expect(page.locator("#currency-USD")).to_contain_text("121.5")
    expect(page.locator("#currency-USD")).to_contain_text("By hand")
    screenshot(page, "currencies")

    PaymentMethodFactory(brand=brand)
    payment = create_payment(brand, {"amount": "10.00", "currency": "USD"})
    customer = new_page()
    customer.goto(f"{live_url}/checkout/{payment.token}")
    expect(customer.locator(".amount")).to_have_text("$10.00")
    expect(customer.locator("#taka-amount")).to_have_text(
        "That is ৳1,215.00 in taka, at ৳121.5 per USD."
    )
    checkout_screenshot(customer, "usd")
