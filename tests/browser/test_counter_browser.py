"""The counter screen in Chromium on a tablet: a sale's QR and number, then "Paid" appearing without
a reload when a simulated SMS pays it; a hostile note stays text; the printed receipt and a new
sale."""

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.testmode.simulate import simulate_payment
from tests.browser.panel_support import PASSWORD, screenshot, sign_in
from tests.factories import PaymentMethodFactory, UserFactory

pytestmark = pytest.mark.browser

TABLET = {"viewport": {"width": 1024, "height": 768}, "has_touch": True}
HOSTILE_NOTE = '<img src=x onerror="alert(1)">Table 4'


@pytest.fixture
def tablet(browser):
    """A tablet-sized window with its own cookies, closed after the test."""
    context = browser.new_context(locale="en-US", **TABLET)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def cashier(brand):
    """A staff member of "Dhaka Crafts", which takes bKash on 01712345678."""
    brand.name = "Dhaka Crafts"
    db.session.commit()
    PaymentMethodFactory(brand=brand, provider="bkash", number="01712345678")
    return UserFactory(brand=brand, role="staff", email="till@dhakacrafts.test", password=PASSWORD)


def the_sale(brand):
    """The brand's newest payment, as the database holds it now."""
    db.session.expire_all()
    return (
        db.session.execute(
            db.select(Payment).where(Payment.brand_id == brand.id).order_by(Payment.id.desc())
        )
        .scalars()
        .first()
    )


def test_a_counter_sale_shows_paid_without_a_reload_when_the_sms_arrives(
    live_url, brand, cashier, tablet
):
    page = tablet
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, live_url, cashier)
    page.get_by_role("switch", name="Viewing test data").click()  # no real money in a test
    expect(page.locator("[data-test-mode]")).to_be_visible()
    page.get_by_role("button", name="Menu").click()  # on a tablet the sidebar is a drawer
    page.get_by_role("link", name="Counter").click()
    expect(page.get_by_role("heading", name="Counter", exact=True)).to_be_visible()

    page.get_by_label("Amount (৳)").fill("0")
    page.get_by_role("button", name="Show QR code").click()
    expect(page.get_by_text("Amount must be greater than zero.")).to_be_visible()

    page.get_by_label("Amount (৳)").fill("450")
    page.get_by_label("Note").fill(HOSTILE_NOTE)
    page.get_by_label("Pay to").select_option(label="bKash · 01712345678")
    page.get_by_role("button", name="Show QR code").click()

    expect(page.locator("svg.counter-qr")).to_be_visible()
    expect(page.locator("[data-sale-amount]")).to_have_text("৳450.00")
    expect(page.get_by_text("01712345678", exact=True)).to_be_visible()
    expect(page.get_by_text(HOSTILE_NOTE, exact=False)).to_be_visible()  # shown as text
    expect(page.locator("[data-sale='paid']")).to_be_hidden()
    sale = the_sale(brand)
    assert sale.livemode is False and sale.metadata_json["note"] == HOSTILE_NOTE
    screenshot(page, "counter-sale")
    page.evaluate("window.stillTheSamePage = true")

    paid = simulate_payment(sale, "paid")  # the claim, then the provider's SMS through ingestion
    assert paid.status == "completed"

    expect(page.locator("[data-sale='paid']")).to_be_visible()
    expect(page.locator(".counter-paid-word")).to_have_text("Paid ৳450.00")
    expect(page.locator("[data-sale-provider-trx]")).to_have_text(paid.provider_trx_id)
    expect(page.locator("[data-sale-trx]")).to_have_text(paid.transaction.trx_id)
    expect(page.locator("[data-sale='open']")).to_be_hidden()
    assert page.evaluate("window.stillTheSamePage") is True  # no reload, no navigation
    screenshot(page, "counter-paid")

    page.get_by_role("link", name="Print receipt").click()
    expect(page.get_by_role("heading", name="Payment receipt")).to_be_visible()
    expect(page.get_by_text(paid.provider_trx_id)).to_be_visible()
    expect(page.get_by_role("button", name="Print")).to_be_visible()
    page.get_by_role("link", name="New sale").click()
    expect(page.get_by_label("Amount (৳)")).to_have_value("")
    assert dialogs == []  # the note's markup never ran
