"""In Chromium: a customer pays by cash deposit, types the slip number and uploads a photo of it;
the owner sees the photo on the payment page and approves it; the customer's page moves on."""

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.payments.methods import add_account_method
from gateway.payments.models.payment import Payment
from gateway.payments.models.payment_proof import PaymentProof
from tests.browser.panel_support import sign_in, window  # noqa: F401 - fixtures
from tests.browser.test_checkout_browser import (  # noqa: F401 - fixtures
    create_payment_through_the_api,
    merchant_site,
    shop,
)
from tests.checkout_helpers import reloaded
from tests.factories import UserFactory
from tests.proof_files import image_bytes

pytestmark = pytest.mark.browser


def test_a_manual_payment_with_a_receipt_photo_is_approved_in_the_panel(
    live_url, shop, auth, merchant_site, new_page, window, tmp_path
):
    add_account_method(
        shop,
        "manual",
        display_name="Cash deposit",
        account_name="Demo Shop Ltd",
        account_number="ACC-0042",
        instructions="Deposit at any branch, then type the slip number.",
        proof="required",
    )
    photo = tmp_path / "slip.jpg"
    photo.write_bytes(image_bytes("JPEG", size=(320, 200)))
    created = create_payment_through_the_api(live_url, auth, merchant_site)

    page = new_page()
    page.goto(created["checkout_url"])
    page.get_by_text("Cash deposit").click()
    expect(page.get_by_text("ACC-0042")).to_be_visible()
    expect(page.get_by_text("Deposit at any branch, then type the slip number.")).to_be_visible()
    page.get_by_label("Payment reference").fill("DEP12345")
    page.get_by_label("Photo or PDF of the receipt").set_input_files(str(photo))
    page.get_by_role("button", name="I have paid — send for checking").click()
    expect(page.get_by_text("checks your reference and receipt by hand")).to_be_visible()

    payment = db.session.execute(
        db.select(Payment).where(Payment.public_id == created["payment_id"])
    ).scalar_one()
    assert reloaded(payment).status == "processing"
    proof = db.session.execute(
        db.select(PaymentProof).where(PaymentProof.payment_id == payment.id)
    ).scalar_one()
    assert bytes(proof.content) == photo.read_bytes()

    panel = window()
    sign_in(
        panel, live_url, UserFactory(brand=shop, role="super_admin", email="owner@demoshop.test")
    )
    panel.goto(f"{live_url}/panel/payments?status=review")
    panel.get_by_role("link", name="ORDER-1042").click()
    image = panel.get_by_role("img", name="Receipt photo uploaded by the customer")
    expect(image).to_be_visible()
    # The photo really loaded from the panel-only address (a broken image has no natural width).
    assert image.evaluate("img => img.naturalWidth") == 320
    panel.once("dialog", lambda dialog: dialog.accept())
    panel.get_by_role("button", name="Approve payment").click()
    expect(panel.get_by_text("Approved: the payment is completed.")).to_be_visible()
    assert reloaded(payment).status == "completed"

    # The customer's waiting page follows the payment to the shop's thank-you page.
    page.wait_for_url(merchant_site.url_for("/thanks") + "*")
