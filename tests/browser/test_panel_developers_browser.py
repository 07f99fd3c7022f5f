"""A shop owner in Chromium on the Developers pages: a key from generation to refusal, webhook
settings, redelivery.
"""

import time

import pytest
import requests
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.browser.panel_support import owner, screenshot, sign_in, window  # noqa: F401 - fixtures
from tests.factories import completed_payment
from tests.webhook_support import drain_queues, receiver, rq_redis  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def api_answer(live_url, secret):
    """What the API says to a key: (status, error code or None)."""
    response = requests.get(
        f"{live_url}/api/v1/payments", headers={"Authorization": f"Bearer {secret}"}, timeout=10
    )
    return response.status_code, response.json().get("code")


def sidebar(page, name):
    """Follow a link of the panel's main navigation."""
    page.get_by_role("navigation", name="Main").get_by_role("link", name=name).click()


def test_a_key_is_generated_used_against_the_api_and_revoked_by_label(
    live_url, brand, owner, window
):  # noqa: F811
    page = window()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_url)
    sign_in(page, live_url, owner)
    sidebar(page, "API keys")
    page.get_by_label("Label").fill("Shop server")
    page.get_by_role("button", name="Generate key").click()

    secret = page.locator("#new-api-key").inner_text()
    expect(page.get_by_role("heading", name="Your new key “Shop server”")).to_be_visible()
    page.get_by_role("button", name="Copy key").click()
    expect(page.locator("#new-key-copied")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    screenshot(page, "api-key-created")
    assert api_answer(live_url, secret) == (200, None)

    # the form is sent again: a second key cannot take the same label, and the first is not shown
    page.reload()
    expect(page.get_by_text("Labels are unique among active keys.")).to_be_visible()
    expect(page.locator("#new-api-key")).to_have_count(0)
    sidebar(page, "API keys")
    page.get_by_role("link", name="Revoke Shop server").click()
    expect(page.get_by_role("heading", name="Revoke the key “Shop server”?")).to_be_visible()
    screenshot(page, "api-key-revoke")
    page.get_by_label("Type the label to confirm").fill("Shop")
    page.get_by_role("button", name="Revoke key").click()
    expect(page.get_by_text("This is not the key's label.")).to_be_visible()
    assert api_answer(live_url, secret) == (200, None)
    page.get_by_label("Type the label to confirm").fill("Shop server")
    page.get_by_role("button", name="Revoke key").click()

    expect(page.get_by_text("The key Shop server is revoked")).to_be_visible()
    expect(page.get_by_role("cell", name="Revoked")).to_be_visible()
    assert api_answer(live_url, secret) == (401, "INVALID_TOKEN")
    screenshot(page, "api-keys")


def test_the_owner_sees_the_secret_on_request_and_sends_a_test_event(
    live_url, brand, owner, window, receiver
):  # noqa: F811
    brand.webhook_url = receiver.url
    db.session.commit()
    page = window()
    sign_in(page, live_url, owner)
    sidebar(page, "Webhook settings")
    expect(page.get_by_text(brand.webhook_secret)).to_have_count(0)
    page.get_by_role("button", name="Show secret").click()
    expect(page.locator("#webhook-secret")).to_have_text(brand.webhook_secret)
    screenshot(page, "webhook-settings")
    page.get_by_role("button", name="Send test event").click()
    expect(page.get_by_text(f"Test event sent to {receiver.url}.")).to_be_visible()
    expect(page.locator("h1 code")).to_have_text("webhook.test")


def test_a_failed_webhook_is_redelivered_from_the_log(
    live_url, brand, owner, window, receiver, rq_redis
):  # noqa: F811
    payment = completed_payment(
        brand=brand, callback_url=receiver.url, reference="ORDER-2051", customer_name="Sadia Islam"
    )
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    receiver.plan = [503]  # the shop's server was down: the next try is scheduled a minute later
    assert deliver_webhook(delivery.id) == "pending"
    page = window()
    sign_in(page, live_url, owner)
    sidebar(page, "Webhook deliveries")
    expect(page.get_by_role("cell", name="payment.completed")).to_be_visible()
    screenshot(page, "webhook-deliveries")
    page.locator(".deliveries-table .row-link").first.click()
    expect(page.get_by_role("link", name="ORDER-2051")).to_be_visible()
    page.get_by_role("button", name="Redeliver").click()
    expect(page.get_by_text("Redelivery started")).to_be_visible()

    drain_queues()  # the RQ worker takes the wake-up the redelivery queued after its commit

    assert [event["data"]["payment_id"] for event in receiver.events()] == [payment.public_id] * 2
    for _ in range(40):  # the attempt is recorded just after the receiver answered
        page.reload()
        if page.locator(".attempts-table .badge-success").count():
            break
        time.sleep(0.1)
    expect(page.locator(".amount-title .badge")).to_have_text("Delivered")
    expect(page.locator(".attempts-table .badge-success")).to_have_text("200")
    expect(page.locator(".attempts-table .badge-failed")).to_have_text("503")
    screenshot(page, "webhook-delivery")
