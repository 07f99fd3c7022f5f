"""A shop owner in Chromium on the phone and SMS pages: pairs a phone, matches a text by hand, tests
a template.
"""

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
import requests
from playwright.sync_api import expect

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.sms.ingest import ingest_batch
from gateway.sms.outbound import queue_sms
from tests.browser.panel_support import owner, screenshot, sign_in, window  # noqa: F401 - fixtures
from tests.checkout_helpers import reloaded
from tests.factories import PaymentFactory, bkash_text, paired_device, sms_message

pytestmark = pytest.mark.browser
ODD_TEXT = "Dear customer, Tk 1,250.50 reached your wallet from 01712345678. Ref QX77PL12 thanks"
PATTERN = (
    r"Tk (?P<amount>[\d,.]+) reached your wallet from (?P<counterparty>\d+)\. Ref (?P<trx_id>\w+)"
)


def sidebar(page, name):
    """Follow a link of the panel's main navigation."""
    page.get_by_role("navigation", name="Main").get_by_role("link", name=name).click()


def choose_ownpay_console(page):
    """From Devices: Add a phone, OwnPay Console, and on to its pairing code."""
    page.get_by_role("link", name="Add a phone").click()
    page.get_by_role("link", name="Choose OwnPay Console").click()
    page.get_by_role("button", name="Pair a phone").click()


def test_the_owner_pairs_a_phone_with_the_code_on_the_page(live_url, brand, owner, window):  # noqa: F811
    page = window()
    sign_in(page, live_url, owner)
    sidebar(page, "Devices & pairing")
    expect(page.get_by_text("No phone yet.")).to_be_visible()
    choose_ownpay_console(page)

    expect(page.get_by_role("heading", name="Pairing code")).to_be_visible()
    expect(page.locator(".qr svg")).to_be_visible()
    clock = page.locator(".countdown time")
    expect(clock).to_have_text("4:59", timeout=5_000)  # the countdown runs before the owner's eyes
    code = page.locator("#pairing-code").inner_text()
    screenshot(page, "pairing")

    answer = requests.post(
        f"{live_url}/api/mobile/v1/devices",
        timeout=10,
        json={
            "pairing_code": code,
            "device_id": uuid.uuid4().hex,
            "device_name": "Counter phone",
            "fingerprint": "install-1",
            "app_version": "2.4.1",
            "platform": "android",
        },
    )
    assert answer.status_code == 201, answer.text
    heartbeat = requests.post(
        f"{live_url}/api/mobile/v1/devices/heartbeats",
        timeout=10,
        json={"battery_level": 81},
        headers={"Authorization": f"Bearer {answer.json()['data']['access_token']}"},
    )
    assert heartbeat.status_code == 200, heartbeat.text
    # The page's own check sees the phone pair and check in, without a reload.
    expect(page.locator("#first-contact")).to_contain_text("The phone checked in at")

    page.get_by_role("link", name="Done: show my devices").click()
    page.wait_for_url("**/panel/devices")  # the click's navigation ends before the reload starts
    page.reload()
    expect(page.get_by_role("cell", name="Counter phone")).to_be_visible()
    expect(page.get_by_text("battery 81%")).to_be_visible()
    screenshot(page, "devices")


def test_an_expired_code_is_struck_through_and_says_so(live_url, brand, owner, window, monkeypatch):  # noqa: F811
    from gateway.panel import devices

    # The page counts down from the seconds the server gives; two seconds keep the test short.
    monkeypatch.setattr(devices, "seconds_left", lambda expires_at: 2)
    page = window()
    sign_in(page, live_url, owner)
    sidebar(page, "Devices & pairing")
    choose_ownpay_console(page)
    expect(page.get_by_role("alert")).to_have_text("This code has expired. Make a new one.")
    expect(page.locator("[data-countdown]")).to_have_class("card pairing-expired")


def test_the_owner_matches_a_text_by_hand_and_teaches_the_parser_a_format(
    live_url, brand, owner, window
):  # noqa: F811
    device, _, aes_key = paired_device(brand, name="Counter phone")
    order = PaymentFactory(
        brand=brand,
        reference="ORDER-2088",
        amount=Decimal("500.00"),
        customer_name="Farhana Akter",
        created_at=utcnow() - timedelta(minutes=12),
    )
    texts = [
        (bkash_text("500.00", "9C4D7E2F1A", "01712345678"), "bKash"),
        (ODD_TEXT, "bKash"),
        ("Your bKash verification code is 482913. Do not share it.", "bKash"),
        # Its balance continues the first credit's (1,500.00 + 780.00): the balance chain checks it.
        (bkash_text("780.00", "7B3C2D1E0F", "01898765432", balance="2280.00"), "bKash"),
    ]
    ingest_batch(device, [sms_message(aes_key, text, sender=sender) for text, sender in texts])
    page = window()
    sign_in(page, live_url, owner)
    sidebar(page, "SMS inbox")
    expect(page.get_by_role("row").filter(has_text="9C4D7E2F1A")).to_be_visible()
    screenshot(page, "sms-inbox")

    page.get_by_role("row").filter(has_text="9C4D7E2F1A").get_by_role("link").click()
    expect(page.get_by_text("Open payments of this amount")).to_be_visible()
    screenshot(page, "sms-message")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Match", exact=True).click()
    expect(page.get_by_text("Matched: payment ORDER-2088 is completed.")).to_be_visible()
    assert reloaded(order).status == "completed" and order.provider_trx_id == "9C4D7E2F1A"

    sidebar(page, "SMS inbox")
    page.get_by_role("link", name="Not understood 1").click()
    page.get_by_role("row").filter(has_text="QX77PL12").get_by_role("link").click()
    page.get_by_role("link", name="Write a template").click()
    expect(page.get_by_label("Sample SMS")).to_have_value(ODD_TEXT)
    page.get_by_label("Regular expression").first.fill(PATTERN)
    page.get_by_role("button", name="Test").click()
    expect(
        page.get_by_text("From this sender, the text counts as an incoming payment.")
    ).to_be_visible()
    expect(page.locator(".trial dd.mono")).to_have_text("QX77PL12")
    page.get_by_label("Name").fill("bKash wallet notice")
    page.get_by_role("button", name="Save template").click()
    expect(page.get_by_text("Template bKash wallet notice saved")).to_be_visible()
    page.get_by_label("Regular expression").first.fill(PATTERN)
    page.get_by_label("Sample SMS").fill(ODD_TEXT)
    page.get_by_role("button", name="Test").click()
    expect(page.get_by_text("Match.")).to_be_visible()
    page.evaluate(
        "window.scrollTo(0, 0)"
    )  # the tester's anchor scrolled the page; a full-page shot starts at the top
    screenshot(page, "sms-templates")


def test_the_owner_retries_a_failed_outbound_sms(live_url, brand, owner, window):  # noqa: F811
    for number, (to, body, status, error) in enumerate(
        (
            (
                "+8801712345678",
                "Dhaka Crafts: payment of 1,250.00 BDT received. Ref TRX4W3AQ2VQ2ZOQ. Thank you.",
                "sent",
                None,
            ),
            (
                "+8801812345678",
                "Dhaka Crafts: your order ORDER-2071 has shipped.",
                "failed",
                "Generic failure (no service)",
            ),
            (
                "+8801912345678",
                "Dhaka Crafts: payment of 780.00 BDT received. Ref TRX7Q2MNB4KLP3D. Thank you.",
                "queued",
                None,
            ),
        )
    ):
        message = queue_sms(brand, to, body)
        message.status, message.last_error = {"queued": "pending"}.get(status, status), error
        message.attempts = {"sent": 1, "failed": 5, "queued": 0}[status]
        message.created_at = utcnow() - timedelta(minutes=30 - number * 10)
        message.sent_at = utcnow() if status == "sent" else None
    db.session.commit()
    page = window()
    sign_in(page, live_url, owner)
    sidebar(page, "Outbound SMS")
    expect(page.get_by_text("Generic failure (no service)")).to_be_visible()
    screenshot(page, "outbound-sms")
    page.get_by_role("button", name="Retry").click()
    expect(page.get_by_text("Message to +8801812345678 queued again.")).to_be_visible()
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
