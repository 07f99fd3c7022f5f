"""In Chromium: a customer who said "I have paid" is warned before cancelling; the money that then
arrives reaches the owner's review, who completes the payment from the panel."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.browser.panel_support import sign_in, window  # noqa: F401 - fixtures
from tests.browser.test_checkout_browser import (  # noqa: F401 - fixtures
    TRX_ID,
    create_payment_through_the_api,
    forward_bkash_sms,
    merchant_site,
    shop,
)
from tests.checkout_helpers import reloaded
from tests.factories import UserFactory

pytestmark = pytest.mark.browser
RISK = "If you already sent the money, cancelling does not return it"


def test_cancel_after_i_have_paid_asks_first_and_the_late_money_is_completed_in_the_panel(
    live_url, shop, auth, merchant_site, runner, new_page, window
):
    shop.webhook_url = "http://127.0.0.1:9/hooks"  # the outbox records what the shop is told
    db.session.commit()
    created = create_payment_through_the_api(live_url, auth, merchant_site)
    page = new_page()
    page.goto(created["checkout_url"])
    page.get_by_label("Transaction ID (TrxID)").first.fill(TRX_ID)
    page.get_by_role("button", name="I have paid — verify").first.click()
    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()

    # One tap on cancel only opens the warning; keeping on waiting cancels nothing.
    expect(page.get_by_text(RISK)).to_be_hidden()
    page.get_by_text("Cancel and return to Demo Shop").click()
    expect(page.get_by_text(RISK)).to_be_visible()
    page.get_by_role("link", name="No, keep waiting for my payment").click()
    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()
    payment = db.session.execute(
        db.select(Payment).where(Payment.public_id == created["payment_id"])
    ).scalar_one()
    assert reloaded(payment).status == "processing"

    page.get_by_text("Cancel and return to Demo Shop").click()
    page.get_by_role("button", name="Yes, cancel the payment").click()
    page.wait_for_url(re.compile(re.escape(merchant_site.url_for("/cart")) + r"\?"))
    assert parse_qs(urlsplit(page.url).query)["status"] == ["cancelled"]
    assert reloaded(payment).status == "cancelled"

    # The customer had paid after all: bKash's SMS reaches the shop's phone and the gateway over
    # HTTP.
    forward_bkash_sms(runner)
    sms = db.session.execute(
        db.select(InboundSms).where(InboundSms.provider_trx_id == TRX_ID)
    ).scalar_one()
    assert (sms.status, sms.payment_id) == ("review", payment.id)

    panel = window()
    sign_in(
        panel, live_url, UserFactory(brand=shop, role="super_admin", email="owner@demoshop.test")
    )
    panel.goto(f"{live_url}/panel/payments?status=review")
    panel.get_by_role("link", name="ORDER-1042").click()
    expect(
        panel.get_by_role("heading", name="Money arrived after this payment was cancelled")
    ).to_be_visible()
    panel.once("dialog", lambda dialog: dialog.accept())
    panel.get_by_role("button", name="Complete payment").click()
    expect(
        panel.get_by_text("Completed: the payment is paid and your shop is told.")
    ).to_be_visible()
    expect(panel.locator(".amount-title .badge")).to_have_text("Completed")
    assert reloaded(payment).status == "completed"
    events = (
        db.session.execute(
            db.select(WebhookDelivery.event)
            .where(WebhookDelivery.payment_id == payment.id)
            .order_by(WebhookDelivery.id)
        )
        .scalars()
        .all()
    )
    assert events == ["payment.cancelled", "payment.completed"]
