"""Settings → E-mail in Chromium: save the SMTP server, send a test to a real local SMTP server."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import SCREENSHOTS, browser, live_server, live_url  # noqa: F401
from tests.browser.panel_support import owner, sign_in, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def test_the_owner_sets_up_email_and_sends_a_test(live_url, brand, owner, window, smtp_server):
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/settings")
    page.get_by_role("link", name="E-mail settings").click()
    expect(page.get_by_role("heading", name="E-mail settings")).to_be_visible()
    page.get_by_role("textbox", name="SMTP server").fill("127.0.0.1")
    page.get_by_label("Port").fill(str(smtp_server.port))
    page.get_by_label("Security").select_option("none")
    page.get_by_label("Password", exact=True).fill("not-shown-again")
    page.get_by_label("From address").fill("billing@dhakacrafts.example")
    page.get_by_label("From name").fill("Dhaka Crafts")
    page.get_by_role("button", name="Save e-mail settings").click()
    expect(page.get_by_text("E-mail settings saved.")).to_be_visible()
    expect(page.get_by_label("Password", exact=True)).to_have_value("")
    expect(page.get_by_role("textbox", name="SMTP server")).to_have_value("127.0.0.1")
    expect(page.get_by_label("From name")).to_have_value("Dhaka Crafts")
    expect(page.get_by_text("A password is saved.")).to_be_visible()

    page.get_by_role("textbox", name="Send a test to").fill("owner@dhakacrafts.example")
    page.get_by_role("button", name="Send test e-mail").click()
    expect(page.get_by_text("Test e-mail sent to owner@dhakacrafts.example.")).to_be_visible()
    (message,) = smtp_server.wait_for(1)
    assert message["To"] == "owner@dhakacrafts.example"
    assert "not-shown-again" not in page.content()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "panel-mail-settings.png"), full_page=True)
