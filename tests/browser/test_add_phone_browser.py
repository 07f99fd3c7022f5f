"""A shop owner in Chromium walks "Add a phone" for each forwarding app: the app's exact request,
built from the URL and key the page shows, is reported on the page as it arrives.

OwnPay Console's walk is the pairing flow's (test_panel_phone_browser.py, test_pairing_browser.py),
which now starts from "Add a phone" too.
"""

import json

import pytest
import requests
from playwright.sync_api import expect

from gateway.devices.models.device import Device
from gateway.extensions import db
from tests.browser.panel_support import owner, screenshot, sign_in, window  # noqa: F401 - fixtures
from tests.factories import bkash_text
from tests.forwarder_apps import (
    ping_event,
    signed,
    sms_received_event,
    sms_to_url_body,
    sms_to_url_headers,
)

pytestmark = pytest.mark.browser
HOSTILE = '<img src=x onerror="window.hacked=1">Counter'
PHONE_WIDTH = 390


def sms_gateway_ping(key):
    """SMS Gateway's signed system:ping: (body, headers)."""
    return signed(ping_event(), key)


def sms_gateway_text(key, text, sender="bKash"):
    """SMS Gateway's signed sms:received event for one text: (body, headers)."""
    return signed(sms_received_event(text, sender=sender), key)


def sms_to_url_text(name, value, text, sender="bKash"):
    """SMS to URL Forwarder's post of one text with the header typed into it: (body, headers)."""
    return sms_to_url_body(text, sender=sender), sms_to_url_headers(f"{name}: {value}")


def add_phone(page, live_url, app_name, label):
    """From Devices: Add a phone, choose the app, name the phone; lands on its steps."""
    page.goto(f"{live_url}/panel/devices")
    page.get_by_role("link", name="Add a phone").click()
    expect(page.get_by_role("heading", name="Add a phone", exact=True)).to_be_visible()
    page.get_by_role("link", name=f"Choose {app_name}").click()
    page.get_by_label("Name of the phone").fill(label)
    page.get_by_role("button", name="Show the address and key").click()
    expect(page.get_by_role("heading", name="Send a test text")).to_be_visible()


def post(url, body, headers):
    """Send an app's request to the gateway over the network, as the phone would."""
    return requests.post(url, data=body, headers=headers, timeout=10)


def test_sms_gateway_for_android_the_signed_text_built_from_the_page_is_reported(
    live_url, brand, owner, window
):  # noqa: F811
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/devices/add")
    expect(page.get_by_role("heading", name="SMS to URL Forwarder")).to_be_visible()
    screenshot(page, "add-phone")
    add_phone(page, live_url, "SMS Gateway for Android", "Counter phone")
    url = page.locator("#intake-url").inner_text().strip()
    key = page.locator("#signing-key").inner_text().strip()
    check = page.locator("#first-contact")
    expect(check).to_have_text("Waiting for the phone's first heartbeat or text…")
    screenshot(page, "add-phone-sms-gateway")

    pinged = post(url, *sms_gateway_ping(key))
    assert pinged.ok, pinged.text
    expect(check).to_contain_text("The phone checked in at")
    answer = post(url, *sms_gateway_text(key, bkash_text("450.00", "9C4D7E2F1A")))
    assert answer.ok, answer.text

    expect(check).to_contain_text("A text arrived at")
    expect(check).to_contain_text("From bKash: “You have received Tk 450.00")
    screenshot(page, "add-phone-arrived")

    page.get_by_role("link", name="Done: show my devices").click()
    row = page.get_by_role("row").filter(has_text="Counter phone")
    expect(row).to_contain_text("SMS Gateway for Android")
    expect(row).to_contain_text("bKash: You have received Tk 450.00")
    screenshot(page, "devices-forwarders")
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Counter phone is revoked")).to_be_visible()
    refused = post(url, *sms_gateway_text(key, bkash_text("451.00", "9C4D7E2F1B")))
    assert refused.status_code in (401, 403), refused.text


def test_sms_to_url_forwarder_the_post_with_the_pages_header_is_reported(
    live_url, brand, owner, window
):  # noqa: F811
    page = window()
    sign_in(page, live_url, owner)
    add_phone(page, live_url, "SMS to URL Forwarder", "Spare phone")
    url = page.locator("#intake-url").inner_text().strip()
    headers = json.loads(page.locator("#intake-headers").inner_text())
    name = next(header for header in headers if header != "User-agent")
    screenshot(page, "add-phone-sms-to-url")

    answer = post(url, *sms_to_url_text(name, headers[name], bkash_text("780.00", "7B3C2D1E0F")))

    assert answer.ok, answer.text
    expect(page.locator("#first-contact")).to_contain_text("From bKash: “You have received Tk 780")

    # A reload sends the form again: no second phone, and the owner is told where the first is.
    page.reload()
    expect(page).to_have_url(f"{live_url}/panel/devices")
    expect(page.get_by_role("status")).to_contain_text("That phone was added already")
    expect(page.get_by_role("row").filter(has_text="Spare phone")).to_have_count(1)


def test_a_hostile_label_sender_and_text_stay_text_on_every_page(live_url, brand, owner, window):  # noqa: F811
    dialogs = []
    page = window(phone=True)
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/devices/add")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDTH
    add_phone(page, live_url, "SMS to URL Forwarder", HOSTILE)
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Connect {HOSTILE}")
    # On a phone's screen the long address and header wrap instead of widening the page.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDTH
    url = page.locator("#intake-url").inner_text().strip()
    headers = json.loads(page.locator("#intake-headers").inner_text())
    name = next(header for header in headers if header != "User-agent")
    text = '<img src=y onerror="window.hacked=2"> Tk 5.00 received'

    answer = post(url, *sms_to_url_text(name, headers[name], text, sender="<b>Mallory</b>"))

    assert answer.ok, answer.text
    check = page.locator("#first-contact")
    expect(check).to_contain_text("From <b>Mallory</b>: “<img src=y")
    assert check.locator("img, b").count() == 0
    page.goto(f"{live_url}/panel/devices")
    row = page.get_by_role("row").filter(has_text=HOSTILE)
    expect(row).to_contain_text("<b>Mallory</b>: <img src=y")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDTH
    assert row.locator("img, b").count() == 0
    assert page.evaluate("window.hacked") is None and dialogs == []
    assert db.session.execute(db.select(Device.name)).scalar_one() == HOSTILE
