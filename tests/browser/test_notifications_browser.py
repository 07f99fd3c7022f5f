"""A shop owner in Chromium sets up notifications and sees a silent phone and a payment waiting too
long.
"""

from datetime import timedelta

import pytest
from playwright.sync_api import expect

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.notifications.settings import settings_for
from tests.browser.panel_support import owner, screenshot, sign_in, window  # noqa: F401 - fixtures
from tests.factories import PaymentFactory, paired_device

pytestmark = pytest.mark.browser
BOT_TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"


def test_the_owner_chooses_channels_and_sets_up_telegram(live_url, brand, owner, window):  # noqa: F811
    page = window()
    sign_in(page, live_url, owner)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Notifications").click()
    expect(page.get_by_role("heading", name="What to send where")).to_be_visible()

    page.get_by_label("A payment completed by Telegram").check()
    page.get_by_label("A payment needs review by E-mail").uncheck()
    page.get_by_label("Bot token").fill(BOT_TOKEN)
    page.get_by_label("Chat id").fill("-1001234567890")
    page.get_by_label("A phone is offline after").fill("20")
    page.get_by_role("button", name="Save notification settings").click()

    expect(page.get_by_text("Notification settings saved.")).to_be_visible()
    expect(page.get_by_text("A bot token is saved.")).to_be_visible()
    expect(page.get_by_label("A payment completed by Telegram")).to_be_checked()
    expect(page.get_by_label("Bot token")).to_have_value("")  # never shown back
    db.session.expire_all()
    settings = settings_for(brand.id)
    assert settings.channels["payment.completed"] == ["telegram"]
    assert settings.channels["payment.review"] == ["telegram"] and settings.offline_minutes == 20

    page.get_by_role("button", name="Send a test").click()
    expect(page.get_by_text("A test is on its way")).to_be_visible()
    expect(
        page.get_by_role("cell", name="Test notification from your payment gateway")
    ).to_be_visible()
    screenshot(page, "notifications")

    phone = window(phone=True)
    sign_in(phone, live_url, owner)
    phone.goto(f"{live_url}/panel/notifications")
    expect(phone.get_by_label("A phone went offline by Telegram")).to_be_visible()
    screenshot(phone, "notifications-phone")


def test_a_silent_phone_and_a_payment_waiting_too_long_are_flagged(live_url, brand, owner, window):  # noqa: F811
    quiet, _, _ = paired_device(brand, name="Counter phone")
    quiet.last_heartbeat_at = utcnow() - timedelta(hours=2)
    quiet.status_json = {"battery_level": 9, "is_charging": False}
    PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id="9XK2LM4PQ1",
        claimed_at=utcnow() - timedelta(minutes=50),
    )
    db.session.commit()
    page = window()
    sign_in(page, live_url, owner)

    flag = page.locator(".waiting-sms")
    expect(flag).to_contain_text("1 payment has waited more than 30 minutes for its SMS")
    screenshot(page, "dashboard-waiting-sms", full_page=False)
    flag.get_by_role("link", name="Devices").click()

    row = page.get_by_role("row").filter(has_text="Counter phone")
    expect(row).to_contain_text("Offline")
    expect(row).to_contain_text("battery 9%")
    screenshot(page, "devices-offline")
