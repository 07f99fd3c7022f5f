"""Invoices in the domain: numbers, totals in Decimal, drafts, states, the PDF."""

import io
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
import requests
from freezegun import freeze_time
from pypdf import PdfReader

from gateway.domain_errors import InvalidState, ValidationFailed
from gateway.extensions import db
from gateway.invoices import lifecycle
from gateway.invoices.drafting import create_invoice, update_invoice
from gateway.invoices.lifecycle import mark_sent, pay_invoice, void_invoice
from gateway.invoices.models.invoice import Invoice
from gateway.invoices.numbering import set_prefix, take_number
from gateway.invoices.pdf import render_invoice_pdf
from gateway.payments.models.payment import Payment
from tests.invoices.conftest import ITEMS, an_invoice


def test_totals_are_exact_decimals(invoice):
    assert [item.amount for item in invoice.items] == [Decimal("3001.00"), Decimal("150.00")]
    assert invoice.subtotal == Decimal("3151.00")
    assert invoice.discount == Decimal("100.00")
    # VAT on the discounted 3051.00 at 15 % = 457.65
    assert (invoice.vat_amount, invoice.total) == (Decimal("457.65"), Decimal("3508.65"))
    assert (invoice.status, invoice.number_text, invoice.currency) == ("draft", "INV-0001", "BDT")
    assert len(invoice.token) >= 32 and invoice.token not in invoice.public_id


def test_numbers_follow_each_other_per_brand_with_the_prefix(brand, other_brand):
    first, second = an_invoice(brand), an_invoice(brand)
    elsewhere = an_invoice(other_brand)
    set_prefix(brand.id, "ACME/")
    db.session.commit()
    third = an_invoice(brand)
    assert [first.number_text, second.number_text, third.number_text] == [
        "INV-0001",
        "INV-0002",
        "ACME/0003",
    ]
    assert elsewhere.number_text == "INV-0001"


def test_a_number_taken_in_a_transaction_that_rolls_back_is_given_back(brand):
    an_invoice(brand)
    assert take_number(brand.id) == (2, "INV-0002")
    db.session.rollback()
    assert an_invoice(brand).number_text == "INV-0002"


@pytest.mark.parametrize(
    "field,data",
    [
        ("items", {"items": []}),
        ("items.0.description", {"items": [{"description": " ", "unit_price": "1"}]}),
        ("items.0.unit_price", {"items": [{"description": "x", "unit_price": "1.001"}]}),
        ("items.0.unit_price", {"items": [{"description": "x", "unit_price": "-5"}]}),
        ("items.1.quantity", {"items": [ITEMS[0], {**ITEMS[1], "quantity": "0"}]}),
        ("items.0.quantity", {"items": [{**ITEMS[0], "quantity": "1.2345"}]}),
        ("discount", {"discount": "99999"}),
        ("vat_rate", {"vat_rate": "101"}),
        ("currency", {"currency": "EUR"}),
        ("due_date", {"due_date": "31/12/2026"}),
        ("language", {"language": "fr"}),
        ("customer", {"customer": {"name": "No contact"}}),
        ("customer_id", {"customer_id": "999999"}),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(brand, field, data):
    with pytest.raises(ValidationFailed) as refused:
        an_invoice(brand, **data)
    assert refused.value.errors[0]["field"] == field
    db.session.rollback()
    assert db.session.execute(db.select(Invoice)).scalars().all() == []


def test_a_draft_can_be_changed_and_a_sent_invoice_cannot(invoice):
    update_invoice(invoice, {"items": [{"description": "Logo", "unit_price": "500"}]})
    db.session.commit()
    assert (invoice.subtotal, invoice.total) == (Decimal("500.00"), Decimal("460.00"))
    assert [item.description for item in invoice.items] == ["Logo"]
    mark_sent(invoice)
    db.session.commit()
    with pytest.raises(InvalidState):
        update_invoice(invoice, {"notes": "too late"})
    assert db.session.get(Invoice, invoice.id).notes == "ধন্যবাদ! Thank you."


def test_void_stops_payment_and_a_paid_or_void_invoice_cannot_be_voided(invoice):
    mark_sent(invoice)
    void_invoice(invoice)
    assert invoice.status == "void" and invoice.voided_at is not None
    with pytest.raises(InvalidState):
        void_invoice(invoice)
    with pytest.raises(InvalidState):
        pay_invoice(invoice)


def test_voiding_cancels_the_payment_left_open_at_checkout(invoice):
    mark_sent(invoice)
    db.session.commit()
    payment = pay_invoice(invoice)
    void_invoice(invoice)
    db.session.expire_all()
    assert db.session.get(Invoice, invoice.id).status == "void"
    assert db.session.get(type(payment), payment.id).status == "cancelled"


def test_paying_twice_reuses_the_open_payment(invoice):
    with pytest.raises(InvalidState):
        pay_invoice(invoice)  # a draft is not payable
    mark_sent(invoice)
    db.session.commit()
    payment = pay_invoice(invoice)
    assert (payment.amount, payment.reference, payment.invoice_id) == (
        Decimal("3508.65"),
        "INV-0001",
        invoice.id,
    )
    assert pay_invoice(invoice).id == payment.id


class Racer(threading.Thread):
    """`work()` in a thread with its own application context and session: another request."""

    def __init__(self, app, work):
        super().__init__(daemon=True)
        self.app, self.work, self.result, self.error = app, work, None, None

    def run(self):
        with self.app.app_context():
            try:
                self.result = self.work()
            except Exception as error:  # noqa: BLE001 - the test asserts on it
                self.error = error
            finally:
                db.session.remove()


def race_before_the_payment_insert(monkeypatch, racer):
    """Run `racer` when pay_invoice is about to create its payment (it has decided the invoice is
    payable and has no open payment): a racer that is not made to wait commits before the insert."""
    create_payment = lifecycle.create_payment

    def create_after_the_racer(*args, **kwargs):
        if racer.ident is None:  # the first call only: the racer's own goes straight on
            racer.start()
            racer.join(timeout=0.5)
        return create_payment(*args, **kwargs)

    monkeypatch.setattr(lifecycle, "create_payment", create_after_the_racer)


def invoice_payments(invoice):
    db.session.expire_all()
    return db.session.execute(
        db.select(Payment).where(Payment.invoice_id == invoice.id).order_by(Payment.id)
    ).scalars().all()  # fmt: skip


def test_a_void_racing_pay_leaves_no_payable_payment_for_the_void_invoice(
    app, invoice, monkeypatch
):
    mark_sent(invoice)
    db.session.commit()
    invoice_id = invoice.id
    voider = Racer(app, lambda: void_invoice(db.session.get(Invoice, invoice_id)).status)
    race_before_the_payment_insert(monkeypatch, voider)

    try:
        pay_invoice(invoice)
    except InvalidState:
        pass  # the void came first: nothing to pay
    voider.join(timeout=30)

    assert not voider.is_alive() and voider.error is None and voider.result == "void"
    db.session.expire_all()
    assert db.session.get(Invoice, invoice_id).status == "void"
    assert [payment.status for payment in invoice_payments(invoice)] in ([], ["cancelled"])


def test_two_pay_clicks_at_once_make_one_payment(app, invoice, monkeypatch):
    mark_sent(invoice)
    db.session.commit()
    invoice_id = invoice.id
    second = Racer(app, lambda: pay_invoice(db.session.get(Invoice, invoice_id)).id)
    race_before_the_payment_insert(monkeypatch, second)

    first = pay_invoice(invoice)
    second.join(timeout=30)

    assert not second.is_alive() and second.error is None
    assert second.result == first.id
    assert [payment.id for payment in invoice_payments(invoice)] == [first.id]


def pdf_text(data):
    """Every page's text, with the control characters shaping leaves between Bangla glyphs
    removed."""
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    return re.sub(r"[\x00-\x08\x0b-\x1f]", "", text)


def test_the_pdf_shows_the_amounts_in_english(invoice):
    mark_sent(invoice)
    data = render_invoice_pdf(invoice, "en")
    assert data.startswith(b"%PDF")
    text = pdf_text(data)
    for expected in (
        "INVOICE",
        "INV-0001",
        "Hosting",
        "৳3,001.00",
        "৳150.00",
        "৳3,151.00",
        "−৳100.00",
        "VAT (15%)",
        "৳457.65",
        "৳3,508.65",
        "rahim@example.com",
        "Due: 2026-12-31",
    ):
        assert expected in text, expected
    assert "উদ্দি" in text  # the Bangla name, shaped
    assert f"/invoice/{invoice.token}" in text
    assert "Pay online" in text


@pytest.mark.parametrize("language", ["en", "bn"])
def test_a_draft_s_pdf_carries_no_pay_link_and_says_it_is_not_sent(invoice, language):
    text = pdf_text(render_invoice_pdf(invoice, language))
    assert invoice.token not in text and "/invoice/" not in text
    assert "Pay online" not in text and "অনলাইনে" not in text
    if language == "en":
        assert "DRAFT: not sent yet" in text
    mark_sent(invoice)
    assert f"/invoice/{invoice.token}" in pdf_text(render_invoice_pdf(invoice, language))


@pytest.mark.parametrize(
    "zone,written_at,issued",
    [
        ("Asia/Dhaka", "2025-01-01 20:00:00", "2025-01-02"),  # 02:00 the next day in Dhaka
        ("Asia/Kathmandu", "2025-01-01 18:15:00", "2025-01-02"),  # UTC+5:45: 00:00 there
        ("America/New_York", "2025-01-02 03:00:00", "2025-01-01"),  # 22:00 the evening before
    ],
)
def test_the_pdf_is_issued_on_the_brands_local_day(brand, zone, written_at, issued):
    brand.timezone = zone
    db.session.commit()
    with freeze_time(written_at):
        invoice = an_invoice(brand)
    db.session.expire_all()  # created_at as stored, read back
    invoice = db.session.get(Invoice, invoice.id)
    assert f"Issued: {issued}" in pdf_text(render_invoice_pdf(invoice, "en"))


def test_the_pdf_in_bangla_has_bangla_words_and_digits(invoice):
    text = pdf_text(render_invoice_pdf(invoice, "bn"))
    assert "৳৩,৫০৮.৬৫" in text  # the total in Bangla digits
    assert "৳৪৫৭.৬৫" in text
    assert "INV-0001" in text
    assert "ওয়েব" in text or "ওযে়ব" in text or "ওয়ে" in text
    assert "চালান" in text  # "INVOICE" in Bangla


def test_concurrent_creates_get_every_number_once(live_server, auth, brand):
    racers = 12
    start = threading.Barrier(racers)
    body = {"customer": {"email": "race@example.com"}, "items": ITEMS}

    def post(_):
        start.wait()
        with requests.Session() as session:
            response = session.post(
                f"{live_server}/api/v1/invoices", json=body, headers=auth, timeout=60
            )
            return response.status_code, response.json()["data"]["number"]

    with ThreadPoolExecutor(max_workers=racers) as pool:
        results = list(pool.map(post, range(racers)))
    assert {status for status, _ in results} == {201}
    assert sorted(number for _, number in results) == [f"INV-{n:04d}" for n in range(1, racers + 1)]
    db.session.expire_all()
    assert sorted(db.session.execute(db.select(Invoice.number)).scalars()) == list(
        range(1, racers + 1)
    )
