"""Invoices in the panel: the form with its line-item rows, the detail page, send, void, PDF."""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.invoices.models.invoice import Invoice
from gateway.sms.models.outbound_sms import OutboundSms
from tests.invoices.conftest import an_invoice
from tests.invoices.test_invoices import pdf_text
from tests.panel.conftest import audit_actions, post_form

FORM = {
    "customer_id": "",
    "customer_name": "Salma <b>Begum</b>",
    "customer_email": "salma@example.com",
    "customer_phone": "+8801722222222",
    "currency": "BDT",
    "language": "en",
    "due_date": "2026-12-31",
    "discount": "10",
    "vat_rate": "5",
    "notes": "Pay within 7 days",
    "items-0-description": "Tailoring",
    "items-0-quantity": "3",
    "items-0-unit_price": "250.00",
    "items-1-description": "",
    "items-1-quantity": "",
    "items-1-unit_price": "",
    "items-2-description": "Buttons",
    "items-2-quantity": "",
    "items-2-unit_price": "20",
}


def the_invoice():
    db.session.expire_all()
    return db.session.execute(db.select(Invoice)).scalar_one()


def test_the_form_creates_a_draft_skipping_empty_rows(as_admin, brand):
    page = as_admin.get("/panel/invoices/new").get_data(as_text=True)
    assert 'name="items-2-unit_price"' in page and 'name="items-3-unit_price"' not in page
    response = post_form(as_admin, "/panel/invoices/new", FORM)
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    invoice = the_invoice()
    assert [(i.description, i.quantity, i.unit_price) for i in invoice.items] == [
        ("Tailoring", Decimal("3"), Decimal("750.00") / 3),
        ("Buttons", Decimal("1"), Decimal("20.00")),
    ]
    # (750 + 20 − 10) × 1.05
    assert (invoice.subtotal, invoice.total) == (Decimal("770.00"), Decimal("798.00"))
    assert invoice.customer.email == "salma@example.com"
    assert ("invoice.create", "owner@shop.test", "INV-0001") in audit_actions(brand)
    detail = as_admin.get(response.headers["Location"]).get_data(as_text=True)
    assert "Salma &lt;b&gt;Begum&lt;/b&gt;" in detail and "<b>Begum</b>" not in detail
    assert "INV-0001" in detail and "Send invoice" in detail


def test_a_bad_row_is_marked_and_nothing_is_saved(as_admin):
    response = post_form(as_admin, "/panel/invoices/new", {**FORM, "items-2-unit_price": "twenty"})
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert 'name="items-2-unit_price"' in page and 'aria-invalid="true"' in page
    assert "Amount must be a decimal string" in page
    assert db.session.execute(db.select(Invoice)).scalar_one_or_none() is None


def test_a_bad_new_customer_is_marked(as_admin):
    response = post_form(as_admin, "/panel/invoices/new", {**FORM, "customer_email": "nope"})
    assert response.status_code == 422
    assert 'id="customer_email-error"' in response.get_data(as_text=True)
    assert db.session.execute(db.select(Invoice)).scalar_one_or_none() is None


def test_add_lines_offers_more_rows_without_saving(as_admin):
    response = post_form(as_admin, "/panel/invoices/new", {**FORM, "more_rows": "1"})
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and 'name="items-5-description"' in page
    assert 'value="Tailoring"' in page
    assert db.session.execute(db.select(Invoice)).scalar_one_or_none() is None


def test_a_draft_is_edited_then_sent_by_sms_then_voided(as_admin, brand):
    invoice = an_invoice(brand)
    url = f"/panel/invoices/{invoice.public_id}"
    edit = as_admin.get(f"{url}/edit").get_data(as_text=True)
    assert 'value="Hosting"' in edit
    changed = {
        **FORM,
        "customer_id": str(invoice.customer_id),
        "items-0-description": "Only this",
        "items-2-description": "",
        "items-2-unit_price": "",
    }
    assert post_form(as_admin, f"{url}/edit", changed).status_code == 303
    assert [i.description for i in the_invoice().items] == ["Only this"]

    assert (
        post_form(as_admin, f"{url}/send", {"channels": ["email"], "language": "bn"}).status_code
        == 422
    )
    sent = post_form(as_admin, f"{url}/send", {"channels": ["sms"], "language": "bn"})
    assert sent.status_code == 303
    assert the_invoice().status == "sent"
    (text,) = db.session.execute(db.select(OutboundSms)).scalars()
    assert "চালান" in text.body and invoice.token in text.body
    assert as_admin.get(f"{url}/edit").status_code == 302  # no longer editable

    assert post_form(as_admin, f"{url}/void").status_code == 303
    assert the_invoice().status == "void"
    actions = [action for action, _, _ in audit_actions(brand)]
    assert {"invoice.update", "invoice.send", "invoice.void"} <= set(actions)


def test_the_pdf_downloads_in_either_language(as_staff, brand):
    invoice = an_invoice(brand)
    response = as_staff.get(f"/panel/invoices/{invoice.public_id}/pdf?lang=bn")
    assert response.status_code == 200 and response.mimetype == "application/pdf"
    assert 'filename="INV-0001.pdf"' in response.headers["Content-Disposition"]
    assert "৳৩,৫০৮.৬৫" in pdf_text(response.data)


def test_the_list_and_another_brands_invoice(as_staff, brand, other_brand):
    an_invoice(brand)
    theirs = an_invoice(other_brand)
    page = as_staff.get("/panel/invoices").get_data(as_text=True)
    assert "INV-0001" in page and "Save prefix" not in page  # the prefix is for super-admins
    assert as_staff.get(f"/panel/invoices/{theirs.public_id}").status_code == 404


def test_the_prefix_changes_new_numbers(as_admin, brand):
    assert post_form(as_admin, "/panel/invoices/prefix", {"prefix": "SHOP-"}).status_code == 302
    assert an_invoice(brand).number_text == "SHOP-0001"
    post_form(as_admin, "/panel/invoices/prefix", {"prefix": "bad prefix!"})
    assert an_invoice(brand).number_text == "SHOP-0002"


@pytest.mark.parametrize("suffix", ["", "/pdf", "?lang=bn"])
def test_the_customer_link_of_a_draft_says_not_sent_yet_and_shows_nothing_of_it(
    client, brand, suffix
):
    invoice = an_invoice(brand, notes="Secret draft note")
    page = client.get(f"/invoice/{invoice.token}{suffix}")
    text = page.get_data(as_text=True)
    assert page.status_code == 404 and page.mimetype == "text/html"
    assert ("Invoice not sent yet" in text) or ("bn" in suffix and "পাঠানো হয়নি" in text)
    assert brand.name in text
    assert "Payment not found" not in text and "Secret draft note" not in text
    assert "3,508.65" not in text and "৩,৫০৮.৬৫" not in text and "/pay" not in text
    assert page.headers["Cache-Control"] == "no-store"


def test_the_customer_page_of_a_void_invoice_takes_no_payment(client, brand):
    invoice = an_invoice(brand)
    assert client.get(f"/invoice/{invoice.token}").status_code == 404  # a draft: not sent yet
    invoice.status = "void"
    db.session.commit()
    page = client.get(f"/invoice/{invoice.token}?lang=bn")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "/pay" not in text and "বাতিল" in text
    assert page.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert client.post(f"/invoice/{invoice.token}/pay", data={}).status_code == 400
    assert client.get("/invoice/not-a-token").status_code == 404
