"""A customer in Chromium: pays from the API call to the thank-you page, cancels, is late, reads
Bangla.
"""

import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from playwright.sync_api import expect

from gateway.clock import utcnow
from tests.checkout_helpers import reloaded
from tests.factories import PaymentFactory, PaymentMethodFactory

pytestmark = pytest.mark.browser
TRX_ID = "9C4D7E2F1A"


@pytest.fixture
def shop(brand):
    """The brand as a customer meets it, with bKash and Nagad numbers."""
    brand.name = "Demo Shop"
    PaymentMethodFactory(brand=brand, provider="bkash", number="01700000000")
    PaymentMethodFactory(brand=brand, provider="nagad", number="01811223344", kind="merchant")
    return brand


@pytest.fixture
def merchant_site(httpserver):
    """The merchant's own pages the customer returns to."""
    for path in ("/thanks", "/cart"):
        httpserver.expect_request(path).respond_with_data(
            f"<h1>Shop {path}</h1>", content_type="text/html"
        )
    return httpserver


def create_payment_through_the_api(live_url, auth, merchant_site):
    """POST /api/v1/payments as the merchant's server does; returns the response data."""
    response = requests.post(
        f"{live_url}/api/v1/payments",
        headers=auth,
        timeout=10,
        json={
            "amount": "500.00",
            "currency": "BDT",
            "reference": "ORDER-1042",
            "customer_name": "Rahim",
            "redirect_url": merchant_site.url_for("/thanks"),
            "cancel_url": merchant_site.url_for("/cart"),
        },
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]


def forward_bkash_sms(runner, amount="500.00"):
    """The shop's phone forwards bKash's credit SMS through the real ingestion endpoint over
    HTTP."""
    result = runner.invoke(
        args=[
            "gateway",
            "simulate-sms",
            "--provider",
            "bkash",
            "--amount",
            amount,
            "--trx-id",
            TRX_ID,
            "--via",
            "http",
        ]
    )
    assert result.exit_code == 0, result.output


def test_a_customer_pays_and_returns_to_the_shop_with_status_completed(
    live_url, shop, auth, merchant_site, runner, new_page, screenshot
):
    created = create_payment_through_the_api(live_url, auth, merchant_site)
    page = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_url)
    page.goto(created["checkout_url"])
    expect(page.get_by_text("৳500.00").first).to_be_visible()
    expect(page.get_by_text("ORDER-1042", exact=True)).to_be_visible()
    screenshot(page, "pay")
    page.get_by_role("button", name="Copy number").click()
    expect(page.get_by_role("status").filter(has_text="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == "01700000000"

    page.get_by_label("Transaction ID (TrxID)").first.fill(TRX_ID.lower())
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()
    screenshot(page, "processing")

    forward_bkash_sms(runner)
    page.wait_for_url(re.compile(re.escape(merchant_site.url_for("/thanks")) + r"\?"))
    query = parse_qs(urlsplit(page.url).query)
    assert query == {"payment_id": [created["payment_id"]], "status": ["completed"]}
    paid = requests.get(
        f"{live_url}/api/v1/payments/{created['payment_id']}", headers=auth, timeout=10
    ).json()
    assert (paid["data"]["status"], paid["data"]["provider_trx_id"]) == ("completed", TRX_ID)


def test_without_javascript_the_waiting_page_refreshes_until_the_success_page(
    live_url, shop, runner, new_page, screenshot
):
    payment = PaymentFactory(brand=shop, reference="ORDER-1043")
    page = new_page(javascript=False)
    page.goto(f"{live_url}/checkout/{payment.token}")
    page.get_by_label("Transaction ID (TrxID)").first.fill(TRX_ID)
    page.get_by_role("button", name="I have paid — verify").first.click()
    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()
    forward_bkash_sms(runner)
    # The meta refresh (every 5 s) brings the customer to the success page: no redirect_url was
    # given.
    expect(page.get_by_role("heading", name="Payment received")).to_be_visible()
    assert page.url == f"{live_url}/checkout/{payment.token}"
    screenshot(page, "completed")


def test_a_customer_cancels_and_returns_to_the_cart(
    live_url, shop, auth, merchant_site, new_page, screenshot
):
    created = create_payment_through_the_api(live_url, auth, merchant_site)
    page = new_page()
    page.goto(created["checkout_url"])
    page.get_by_role("button", name="Cancel and return to Demo Shop").click()
    page.wait_for_url(re.compile(re.escape(merchant_site.url_for("/cart")) + r"\?"))
    assert parse_qs(urlsplit(page.url).query) == {
        "payment_id": [created["payment_id"]],
        "status": ["cancelled"],
    }
    page.goto(created["checkout_url"])
    expect(page.get_by_role("heading", name="Payment cancelled")).to_be_visible()
    screenshot(page, "cancelled")


def test_the_countdown_turns_into_the_expired_page(live_url, shop, new_page, screenshot):
    payment = PaymentFactory(
        brand=shop, reference="ORDER-1044", expires_at=utcnow() + timedelta(seconds=2)
    )
    page = new_page()
    page.goto(f"{live_url}/checkout/{payment.token}")
    expect(page.get_by_role("heading", name="This payment has expired")).to_be_visible()
    expect(page.get_by_label("Transaction ID (TrxID)")).to_have_count(0)
    screenshot(page, "expired")
    assert reloaded(payment).status == "created"  # the page tells; the sweep job changes the row


def test_a_bangla_speaking_customer_gets_the_page_in_bangla_and_can_switch(
    live_url, shop, new_page, screenshot
):
    payment = PaymentFactory(brand=shop, reference="ORDER-1045")
    page = new_page(locale="bn-BD")
    page.goto(f"{live_url}/checkout/{payment.token}")
    expect(page.locator("html")).to_have_attribute("lang", "bn")
    expect(page.get_by_text("পরিশোধের পরিমাণ")).to_be_visible()
    expect(page.get_by_role("button", name="নম্বর কপি করুন").first).to_be_visible()
    screenshot(page, "bn")
    page.get_by_role("link", name="English").click()
    expect(page.get_by_text("Amount to pay")).to_be_visible()
    page.reload()
    expect(page.get_by_text("Amount to pay")).to_be_visible()
