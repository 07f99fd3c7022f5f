"""Every main panel page in Chromium, on a desktop and a phone, in English and Bangla: kept as
screenshots.
"""

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.panel_support import owner, screenshot, shop_history, sign_in, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser

PAGES = [  # (path, heading, screenshot name)
    ("/panel/payments", "Payments", "payments"),
    ("/panel/customers", "Customers", "customers"),
    ("/panel/refunds", "Refunds", "refunds"),
    ("/panel/settings", "Settings", "settings"),
    ("/panel/users", "Users", "users"),
    ("/panel/audit-log", "Audit log", "audit-log"),
]


def watch(page, live_url):
    """Record requests to any other origin and script errors on the page."""
    seen = {"foreign": [], "errors": []}
    origin = urlsplit(live_url).netloc
    page.on(
        "request",
        lambda request: (
            seen["foreign"].append(request.url)
            if urlsplit(request.url).netloc not in (origin, "")
            else None
        ),
    )
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    return seen


def test_the_main_pages_render_with_nothing_from_other_sites(live_url, brand, owner, window):
    shop_history(brand)
    page = window()
    seen = watch(page, live_url)
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/settings")
    page.get_by_label("Provider").select_option("upay")
    page.get_by_role("textbox", name="Receiving number").fill("01911223344")
    page.get_by_role("button", name="Add number").click()
    expect(page.get_by_text("Upay 01911223344 added.")).to_be_visible()
    page.goto(f"{live_url}/panel/users")
    page.get_by_role("textbox", name="E-mail").fill("shathi@dhakacrafts.test")
    page.get_by_role("textbox", name="Name").fill("Shathi Roy")
    page.get_by_role("button", name="Create user").click()
    expect(page.locator("#temporary-password")).to_have_text(re.compile(r"^\S{16}$"))
    screenshot(page, "user-invited", full_page=False)
    for path, heading, name in PAGES:
        page.goto(live_url + path)
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
        screenshot(page, name)
    expect(page.get_by_role("cell", name="User invited")).to_be_visible()
    page.goto(f"{live_url}/panel/customers")
    page.get_by_role("link", name="Rahim Uddin").click()
    expect(page.get_by_role("heading", name="Rahim Uddin")).to_be_visible()
    screenshot(page, "customer")
    assert seen == {"foreign": [], "errors": []}


def test_on_a_phone_the_sidebar_folds_into_a_menu(live_url, brand, owner, window):
    shop_history(brand, days=7)
    page = window(phone=True)
    sign_in(page, live_url, owner)
    sidebar = page.get_by_role("navigation", name="Main")
    expect(sidebar).not_to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "phone-dashboard", full_page=False)
    page.get_by_role("button", name="Menu").click()
    expect(sidebar).to_be_visible()
    screenshot(page, "phone-menu", full_page=False)
    page.keyboard.press("Escape")
    expect(sidebar).not_to_be_visible()
    page.get_by_role("button", name="Menu").click()
    sidebar.get_by_role("link", name="Payments").click()
    expect(page.get_by_role("heading", name="Payments", exact=True)).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_the_panel_speaks_bangla(live_url, brand, owner, window):
    shop_history(brand, days=7)
    page = window(locale="bn-BD")
    page.goto(f"{live_url}/panel/sign-in")
    expect(page.locator("html")).to_have_attribute("lang", "bn")
    sign_in_button = page.locator("form button[type=submit]")
    page.locator("#email").fill(owner.email)
    page.locator("#password").fill("correct horse battery")
    sign_in_button.click()
    expect(page.locator("html")).to_have_attribute("lang", "bn")
    expect(page.locator("svg.chart")).to_be_visible()
    screenshot(page, "bn-dashboard")
    page.get_by_role("link", name="English").click()
    expect(page.get_by_role("heading", name="Dashboard", exact=True)).to_be_visible()
