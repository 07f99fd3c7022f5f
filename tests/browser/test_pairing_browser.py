"""A shop owner in Chromium on the pairing page: where to get the app, an address a phone cannot
reach, reopening.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.panel_support import owner, sign_in, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser
APP_URL = "https://apps.dhakacrafts.test/companion.apk"


def test_the_pairing_page_names_the_app_warns_of_a_loopback_address_and_survives_reopening(
    app, live_url, brand, owner, window, monkeypatch
):  # noqa: F811
    monkeypatch.setitem(app.config, "COMPANION_APP_URL", APP_URL)
    page = window(phone=True)
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/devices")
    page.get_by_role("link", name="Add a phone").click()
    page.get_by_role("link", name="Choose OwnPay Console").click()
    page.get_by_role("button", name="Pair a phone").click()

    # live_url is 127.0.0.1: the owner is told a phone cannot reach it, and what to run instead.
    warning = page.locator("#unreachable-address")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text(f"A phone cannot reach {live_url}")
    expect(warning.locator("code")).to_have_text("make run HOST=0.0.0.0")
    download = page.get_by_role("link", name=APP_URL)
    expect(download).to_be_visible()
    expect(download).to_have_attribute("href", APP_URL)
    expect(page.locator("#pairing-code")).to_have_text(re.compile(r"^\d{6}$"))

    # Opened again from the address bar or history: a GET of the POST-only pairing address.
    page.goto(page.url)

    expect(page).to_have_url(f"{live_url}/panel/devices")
    expect(page.get_by_role("status")).to_contain_text("A pairing code is shown only once.")
    expect(page.get_by_role("link", name="Add a phone")).to_be_visible()
