"""The customer's invoice page on a phone and the panel's invoice form, in Chromium: kept as
screenshots.
"""

import re

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent
from tests.browser.conftest import SCREENSHOTS, browser, live_server, live_url, new_page  # noqa: F401
from tests.browser.panel_support import owner, sign_in, window  # noqa: F401 - fixtures
from tests.factories import PaymentMethodFactory
from tests.invoices.conftest import an_invoice

pytestmark = pytest.mark.browser


def keep(page, name):
    """A full-page screenshot as build/screenshots/invoice-<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(SCREENSHOTS / f"invoice-{name}.png"),
        full_page=True,
        animations="disabled",
        caret="hide",
    )


def test_the_customer_reads_the_invoice_and_goes_to_pay(live_url, brand, new_page):
    brand.name = "Dhaka Crafts"
    PaymentMethodFactory(brand=brand, provider="bkash", number="01711223344")
    invoice = an_invoice(brand)
    mark_sent(invoice)
    db.session.commit()

    page = new_page()
    page.goto(f"{live_url}/invoice/{invoice.token}")
    expect(page.get_by_text("Invoice INV-0001").first).to_be_visible()
    expect(page.get_by_text("Web design / ওয়েব ডিজাইন")).to_be_visible()
    expect(page.locator(".amount")).to_have_text("৳3,508.65")
    keep(page, "page")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download PDF").click()
    assert download.value.suggested_filename == "INV-0001.pdf"

    bangla = new_page(locale="bn-BD")
    bangla.goto(f"{live_url}/invoice/{invoice.token}?lang=bn")
    expect(bangla.get_by_text("মোট", exact=True)).to_be_visible()
    keep(bangla, "page-bn")

    page.get_by_role("button", name="Pay ৳3,508.65").click()
    expect(page).to_have_url(re.compile(r"/checkout/[\w-]+$"))
    expect(page.locator(".amount")).to_contain_text("3,508.65")
    keep(page, "checkout")


def test_the_merchant_writes_an_invoice_in_the_panel(live_url, brand, owner, window):
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/invoices")
    page.get_by_role("link", name="New invoice").click()
    expect(page.get_by_role("heading", name="New invoice")).to_be_visible()
    page.get_by_label("New customer's name").fill("Farhana Akter")
    page.get_by_label("New customer's e-mail").fill("farhana@example.com")
    page.get_by_label("New customer's phone").fill("+8801722334455")
    page.get_by_label("Due date").fill("2026-12-31")
    page.get_by_label("VAT (%)").fill("5")
    page.locator("#items-0-description").fill("Nakshi kantha, large")
    page.locator("#items-0-quantity").fill("2")
    page.locator("#items-0-unit_price").fill("2200")
    page.get_by_role("button", name="Add lines").click()
    expect(page.locator("#items-5-description")).to_be_visible()
    expect(page.locator("#items-0-description")).to_have_value("Nakshi kantha, large")
    page.locator("#items-1-description").fill("Gift wrapping")
    page.locator("#items-1-unit_price").fill("twenty")
    page.get_by_role("button", name="Save invoice").click()
    expect(page.locator("#items-1-unit_price")).to_have_attribute("aria-invalid", "true")
    keep(page, "panel-form-error")
    page.locator("#items-1-unit_price").fill("50")
    keep(page, "panel-form")
    page.get_by_role("button", name="Save invoice").click()

    expect(page.get_by_role("heading", name="Invoice INV-0001")).to_be_visible()
    # (4400 + 50) × 1.05
    expect(page.get_by_role("row", name=re.compile(r"^Total\W+4,672\.50$"))).to_be_visible()
    page.get_by_role("checkbox", name="E-mail (with the PDF)").uncheck()
    page.get_by_role("button", name="Send invoice").click()
    expect(page.get_by_text("Invoice INV-0001 is on its way.")).to_be_visible()
    expect(page.locator("h1 .badge")).to_have_text("Unpaid")
    keep(page, "panel-detail")
