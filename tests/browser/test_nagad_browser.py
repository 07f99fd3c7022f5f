"""A customer in Chromium pays with Nagad's merchant checkout (the local Nagad stand-in's page),
comes back to the shop paid, and the merchant's webhook receiver gets payment.completed; a
customer who cancels on Nagad's page is back at the checkout with the reason."""

import re

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.wallets import nagad as nagad_api
from gateway.wallets.credentials import add_api_method
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import reloaded
from tests.factories import PaymentFactory
from tests.wallet_standins.nagad import NagadStandIn
from tests.webhook_support import receiver  # noqa: F401 - fixture

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def nagad():
    with NagadStandIn().running() as standin:
        yield standin


@pytest.fixture
def nagad_method(app, brand, nagad, monkeypatch):
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 5)
    return add_api_method(
        brand,
        "nagad",
        nagad.origin,
        {
            "merchant_id": nagad.merchant_id,
            "merchant_private_key": nagad.merchant_private_pem,
            "wallet_public_key": nagad.nagad_public_pem,
        },
    )


@pytest.fixture
def merchant_site(httpserver):
    httpserver.expect_request("/thanks").respond_with_data(
        "<h1>Shop thanks</h1>", content_type="text/html"
    )
    return httpserver


def choose_nagad(page):
    """Open the Nagad method on the pay page and press its button."""
    method = page.locator("details.method-wallet-api")
    if method.get_attribute("open") is None:
        method.locator("summary").click()
    page.get_by_role("button", name="Pay with Nagad").click()


def test_a_customer_pays_on_nagads_page_and_returns_to_the_shop_paid(
    live_url,
    brand,
    nagad,
    nagad_method,
    merchant_site,
    receiver,  # noqa: F811
    new_page,
):
    brand.webhook_url = receiver.url
    payment = PaymentFactory(brand=brand, redirect_url=merchant_site.url_for("/thanks"))
    db.session.commit()
    page = new_page()
    page.goto(f"{live_url}/checkout/{payment.token}")

    choose_nagad(page)
    expect(page.locator("#amount")).to_have_text("500.00")
    assert page.url.startswith(f"{nagad.origin}/pay/")
    page.locator("#pay").click()

    page.wait_for_url(re.compile(re.escape(merchant_site.url_for("/thanks")) + r"\?"))
    assert "status=completed" in page.url
    paid = reloaded(payment)
    assert paid.status == "completed" and paid.provider == "nagad"
    reference = nagad.reference_for()
    assert paid.provider_trx_id == nagad.checkouts[reference].issuer_ref
    delivery = db.session.execute(
        db.select(WebhookDelivery).where(WebhookDelivery.event == "payment.completed")
    ).scalar_one()
    assert deliver_webhook(delivery.id) == "sent"
    (event,) = [e for e in receiver.events() if e["event"] == "payment.completed"]
    assert event["data"]["payment_id"] == payment.public_id


def test_a_customer_who_cancels_on_nagads_page_is_back_at_the_checkout(
    live_url, brand, nagad, nagad_method, new_page
):
    payment = PaymentFactory(brand=brand)
    db.session.commit()
    page = new_page()
    page.goto(f"{live_url}/checkout/{payment.token}")

    choose_nagad(page)
    page.locator("#cancel").click()

    expect(page.get_by_text("You cancelled the payment in the wallet.")).to_be_visible()
    assert page.url.startswith(live_url)
    assert reloaded(payment).status == "created"
