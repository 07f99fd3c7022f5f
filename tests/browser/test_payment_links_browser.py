"""Payment links in Chromium: the public page on a phone, and the panel's link form on a desktop."""

import re
from decimal import Decimal
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.links.models.link import LinkPayment, PaymentLink
from tests.browser.panel_support import owner, sign_in, window  # noqa: F401 - fixtures
from tests.browser.panel_support import screenshot as panel_screenshot
from tests.factories import PaymentMethodFactory
from tests.links.support import make_link

pytestmark = pytest.mark.browser


def foreign_requests(page, live_url):
    """Requests the page makes to any other origin (there must be none)."""
    seen = []
    origin = urlsplit(live_url).netloc
    page.on(
        "request",
        lambda request: (
            seen.append(request.url) if urlsplit(request.url).netloc not in (origin, "") else None
        ),
    )
    return seen


def test_the_link_page_on_a_phone_takes_answers_and_opens_the_checkout(
    live_url, brand, new_page, screenshot
):
    brand.name = "Dhaka Crafts"
    db.session.commit()
    PaymentMethodFactory(brand=brand, number="01712345678")
    link = make_link(
        brand,
        title="Nakshi kantha, hand stitched",
        description="Cotton, 150 × 220 cm.\nDelivery in Dhaka in 2 days.",
        amount=None,
        min_amount=Decimal("500"),
        max_amount=Decimal("20000"),
        slug="nakshi-kantha",
        custom_fields=[
            {"kind": "name", "required": True},
            {"kind": "phone", "required": True},
            {"kind": "address", "required": True},
            {"kind": "text", "label": "Colour", "required": False},
        ],
    )
    page = new_page()
    foreign = foreign_requests(page, live_url)
    page.goto(f"{live_url}/pay/{link.slug}")
    expect(page.get_by_role("heading", name="Nakshi kantha, hand stitched")).to_be_visible()
    screenshot(page, "link-page")
    # Nothing wider than the phone: no sideways scrolling.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.get_by_label("Amount (BDT)").fill("100")
    page.get_by_role("button", name="Continue to payment").click()
    expect(page.get_by_text("The amount is below what this link accepts.")).to_be_visible()
    expect(page.get_by_text("Please fill this in.")).to_have_count(3)
    screenshot(page, "link-page-errors")

    page.get_by_label("Amount (BDT)").fill("2500")
    page.get_by_label("Your name").fill("Farhana Akter")
    page.get_by_label("Your mobile number").fill("01812345678")
    page.get_by_label("Delivery address").fill("House 12, Road 5\nDhanmondi")
    page.get_by_label("Colour").fill("Red")
    page.get_by_role("button", name="Continue to payment").click()

    expect(page).to_have_url(re.compile(r"/checkout/[\w-]+$"))
    expect(page.get_by_text("৳2,500.00").first).to_be_visible()
    assert foreign == []
    db.session.expire_all()
    row = db.session.execute(db.select(LinkPayment)).scalar_one()
    assert row.answers == {
        "name": "Farhana Akter",
        "phone": "+8801812345678",
        "address": "House 12, Road 5\nDhanmondi",
        "text": "Red",
    }


def test_a_turned_off_link_on_a_phone_says_so_in_bangla(live_url, brand, new_page, screenshot):
    link = make_link(brand, title="Eid hamper")
    link.status = "disabled"
    db.session.commit()
    page = new_page(locale="bn-BD")
    response = page.goto(f"{live_url}/pay/{link.slug}?lang=bn")
    assert response.status == 410
    expect(page.get_by_role("heading", name="এই পেমেন্ট লিংকটি বন্ধ করা হয়েছে")).to_be_visible()
    screenshot(page, "link-page-off-bn")


def test_the_panel_link_form_creates_a_link_to_share(live_url, brand, owner, window):
    page = window()
    foreign = foreign_requests(page, live_url)
    sign_in(page, live_url, owner)
    page.get_by_role("link", name="Payment links").first.click()
    page.get_by_role("link", name="New payment link").click()
    page.get_by_label("Title").fill("Winter jacket")
    page.get_by_label("Description").fill("Warm and light, all sizes.")
    # Only the boxes that apply are shown: a fixed amount hides the bounds, an open one the amount.
    expect(page.get_by_label("Smallest amount")).to_be_hidden()
    page.get_by_label("Amount", exact=True).select_option("open")
    expect(page.get_by_label("Fixed amount")).to_be_hidden()
    expect(page.get_by_label("Smallest amount")).to_be_visible()
    page.get_by_label("Amount", exact=True).select_option("fixed")
    expect(page.get_by_label("Your question")).to_be_hidden()
    page.get_by_label("Fixed amount").fill("2450")
    page.get_by_label("Delivery address").select_option("required")
    page.get_by_label("A question of your own").select_option("required")
    page.get_by_label("Your question").fill("Size")
    page.get_by_label("Most payments").fill("25")
    panel_screenshot(page, "link-form")
    page.get_by_role("button", name="Create link").click()

    expect(page.get_by_text("The payment link is ready to share.")).to_be_visible()
    expect(page.get_by_role("heading", name=re.compile("Winter jacket"))).to_be_visible()
    link = db.session.execute(db.select(PaymentLink)).scalar_one()
    expect(page.locator("#link-url")).to_have_text(f"{live_url}/pay/{link.slug}")
    expect(page.get_by_role("button", name="Copy link")).to_be_visible()
    expect(page.locator("svg.qr")).to_be_visible()
    panel_screenshot(page, "link-detail")
    assert (link.amount, link.usage_limit) == (Decimal("2450.00"), 25)
    assert [field["key"] for field in link.custom_fields] == ["name", "phone", "address", "text"]

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Turn off").click()
    expect(page.get_by_text("The link is turned off.")).to_be_visible()
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).status == "disabled"
    assert foreign == []
