"""Two-factor sign-in in Chromium: enrolling with the QR code, then signing in with a code; kept as
screenshots.
"""

import re
import time
from urllib.parse import urlsplit

import pyotp
import pytest
from playwright.sync_api import expect

from tests.browser.panel_support import PASSWORD, owner, screenshot, sign_in, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def test_an_owner_enrols_with_the_qr_code_and_signs_in_with_a_code(live_url, owner, window):  # noqa: F811
    page = window()
    foreign = []
    origin = urlsplit(live_url).netloc
    page.on(
        "request",
        lambda request: (
            foreign.append(request.url)
            if urlsplit(request.url).netloc not in (origin, "")
            else None
        ),
    )
    sign_in(page, live_url, owner)
    page.get_by_role("link", name="Two-factor sign-in").click()
    page.get_by_role("button", name="Set up two-factor sign-in").click()
    qr = page.get_by_role("img", name="QR code for your authenticator app")
    expect(qr).to_be_visible()
    assert qr.get_attribute("src").startswith("data:image/svg+xml")
    secret = page.locator("#totp-secret").inner_text().strip()
    assert re.fullmatch(r"[A-Z2-7]{32}", secret)
    screenshot(page, "two-factor-enrol")

    totp = pyotp.TOTP(secret)
    page.get_by_role("textbox", name="Code").fill(totp.now())
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("heading", name="Two-factor sign-in is on")).to_be_visible()
    expect(page.locator(".recovery-codes li")).to_have_count(10)
    screenshot(page, "two-factor-recovery-codes")

    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("E-mail").fill(owner.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Two-factor sign-in")).to_be_visible()
    # Not signed in yet: the dashboard sends the visitor back to sign in.
    page.goto(f"{live_url}/panel/dashboard")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.goto(f"{live_url}/panel/sign-in/two-factor")
    screenshot(page, "two-factor-sign-in")

    # The enrolment used this 30-second step's code; a code is never accepted twice, so use the
    # next.
    page.get_by_role("textbox", name="Code").fill(totp.at(time.time() + 30))
    page.get_by_role("button", name="Verify").click()
    expect(page.get_by_role("heading", name="Dashboard", exact=True)).to_be_visible()
    assert foreign == []
