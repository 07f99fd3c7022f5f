"""The counter screen: who may sell, the sale form's checks, the sale's page and the small status
JSON it polls (signed in, the brand's own, in the panel's mode), and the printed receipt."""

import re
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from gateway.payments.methods import add_account_method
from gateway.payments.models.payment import Payment
from tests.factories import BrandFactory, PaymentFactory, PaymentMethodFactory, UserFactory
from tests.panel.conftest import audit_actions, csrf_token, panel_client, post_form, sign_in

RECEIPT_CSS = Path(__file__).resolve().parents[2] / "static" / "receipt" / "receipt.css"
HOSTILE_NOTE = '<img src=x onerror="alert(1)"> & table 4'


@pytest.fixture
def bkash(brand):
    return PaymentMethodFactory(brand=brand, provider="bkash", number="01712345678")


def payments_of(brand):
    """The brand's payments, oldest first, as the database holds them now."""
    db.session.expire_all()
    return (
        db.session.execute(db.select(Payment).where(Payment.brand_id == brand.id).order_by("id"))
        .scalars()
        .all()
    )


def sell(client, method, amount="450", note="", **extra):
    """Press "Show QR code" on the counter form."""
    data = {"amount": amount, "note": note, "method_id": str(method.id), **extra}
    return post_form(client, "/panel/counter", data)


def sale_url(payment, suffix=""):
    return f"/panel/counter/{payment.public_id}{suffix}"


def test_staff_sells_at_the_counter_and_sees_the_qr_the_number_and_the_amount(
    as_staff, brand, bkash
):
    form = as_staff.get("/panel/counter")
    assert form.status_code == 200
    assert "01712345678" in form.get_data(as_text=True)

    answer = sell(as_staff, bkash, "1,250.50", HOSTILE_NOTE)
    [payment] = payments_of(brand)
    assert answer.status_code == 303 and answer.headers["Location"].endswith(sale_url(payment))
    assert (payment.amount, payment.currency, payment.status, payment.livemode) == (
        Decimal("1250.50"),
        "BDT",
        "created",
        True,
    )
    assert payment.amount_paid == Decimal("1250.50") and payment.fee == Decimal("0.00")
    assert payment.reference.startswith("COUNTER-") and len(payment.reference) == 16
    assert payment.metadata_json == {
        "source": "counter",
        "method_id": str(bkash.id),
        "note": HOSTILE_NOTE,
    }
    assert audit_actions(brand)[-1] == (
        "payment.counter_sale",
        "clerk@shop.test",
        payment.public_id,
    )

    page = as_staff.get(sale_url(payment)).get_data(as_text=True)
    assert '<svg role="img" aria-label="QR"' in page and 'class="counter-qr"' in page
    assert "01712345678" in page and "৳1,250.50" in page and payment.reference in page
    assert f"/checkout/{payment.token}" in page
    assert HOSTILE_NOTE not in page and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
    assert "static/counter.js" in page and "<script>" not in page


def test_the_counter_is_in_the_sidebar_for_staff_not_for_viewers(client, brand, bkash):
    staff = UserFactory(brand=brand, role="staff", email="s@shop.test")
    viewer = UserFactory(brand=brand, role="viewer", email="v@shop.test")
    sign_in(client, staff)
    assert 'href="/panel/counter"' in client.get("/panel/dashboard").get_data(as_text=True)
    other = panel_client(client.application)
    sign_in(other, viewer)
    assert 'href="/panel/counter"' not in other.get("/panel/dashboard").get_data(as_text=True)


def test_a_viewer_may_not_sell_or_watch_a_sale(client, brand, bkash):
    payment = PaymentFactory(brand=brand)
    sign_in(client, UserFactory(brand=brand, role="viewer", email="v@shop.test"))
    assert client.get("/panel/counter").status_code == 403
    assert sell(client, bkash).status_code == 403
    for suffix in ("", "/status", "/receipt"):
        assert client.get(sale_url(payment, suffix)).status_code == 403
    assert len(payments_of(brand)) == 1


def test_signed_out_nobody_sells_or_reads_a_sale_s_status(client, brand, bkash):
    payment = PaymentFactory(brand=brand)
    for url in ("/panel/counter", sale_url(payment), sale_url(payment, "/status")):
        answer = client.get(url)
        assert answer.status_code == 302 and "/panel/sign-in" in answer.headers["Location"]
    assert client.post("/panel/counter", data={"amount": "5"}).status_code in (302, 400)
    assert payments_of(brand) == [payment]


@pytest.mark.parametrize("token", [None, "forged"])
def test_a_sale_without_a_valid_csrf_token_is_refused(as_staff, brand, bkash, token):
    data = {"amount": "450", "method_id": str(bkash.id)}
    if token:
        data["csrf_token"] = token
    answer = as_staff.post("/panel/counter", data=data)
    assert answer.status_code == 400
    assert payments_of(brand) == []


@pytest.mark.parametrize(
    "amount, message",
    [
        ("", "This field is required."),
        ("abc", "Enter an amount such as 500 or 500.50."),
        ("12.345", "Enter an amount such as 500 or 500.50."),
        ("0", "Amount must be greater than zero."),
        ("-5", "Enter an amount such as 500 or 500.50."),
        ("99999999999", "Amount must not exceed"),
    ],
)
def test_a_bad_amount_shows_its_error_on_the_form(as_staff, brand, bkash, amount, message):
    answer = sell(as_staff, bkash, amount)
    page = answer.get_data(as_text=True)
    assert answer.status_code == 422
    assert 'id="amount-error"' in page and message in page
    assert payments_of(brand) == []


def test_a_long_note_or_a_number_not_switched_on_is_refused(as_staff, brand, bkash):
    off = PaymentMethodFactory(brand=brand, number="01812345678", enabled=False)
    elsewhere = PaymentMethodFactory(brand=BrandFactory(), number="01912345678")
    answer = sell(as_staff, bkash, note="x" * 201)
    assert answer.status_code == 422 and 'id="note-error"' in answer.get_data(as_text=True)
    for method in (off, elsewhere):
        answer = sell(as_staff, method)
        assert answer.status_code == 422 and 'id="method_id-error"' in answer.get_data(as_text=True)
    assert payments_of(brand) == []


def test_without_a_number_switched_on_the_counter_says_so(as_staff, brand):
    page = as_staff.get("/panel/counter").get_data(as_text=True)
    assert "No receiving number is switched on" in page and 'name="amount"' not in page


def test_the_status_follows_the_sale_until_it_is_paid(as_staff, brand, bkash):
    sell(as_staff, bkash, "450")
    [payment] = payments_of(brand)
    status = as_staff.get(sale_url(payment, "/status"))
    assert status.status_code == 200 and status.headers["Cache-Control"] == "no-store"
    assert status.json["status"] == "created" and status.json["paid"] is False
    assert status.json["trx_id"] is None and status.json["amount_text"] == "৳450.00"
    assert set(status.json) == {
        "status",
        "paid",
        "amount_text",
        "provider_trx_id",
        "trx_id",
        "seconds_left",
    }  # nothing the merchant typed (the note) travels in it

    complete_payment(payment, provider="bkash", provider_trx_id="9A7B6C5D4E")
    paid = as_staff.get(sale_url(payment, "/status")).json
    assert (paid["status"], paid["paid"], paid["provider_trx_id"]) == (
        "completed",
        True,
        "9A7B6C5D4E",
    )
    assert paid["trx_id"] == payment.transaction.trx_id
    page = as_staff.get(sale_url(payment)).get_data(as_text=True)
    assert 'data-status="completed"' in page and "9A7B6C5D4E" in page

    receipt = as_staff.get(sale_url(payment, "/receipt"))
    text = receipt.get_data(as_text=True)
    assert receipt.status_code == 200 and "9A7B6C5D4E" in text and "Print" in text
    assert "receipt/receipt.css" in text and "@media print" in RECEIPT_CSS.read_text()


@pytest.mark.parametrize(
    "status, shown",
    [("expired", "This sale has expired"), ("cancelled", "This sale was cancelled")],
)
def test_an_ended_sale_says_how_it_ended(as_staff, brand, bkash, status, shown):
    payment = PaymentFactory(brand=brand, status=status, metadata_json={"method_id": str(bkash.id)})
    page = as_staff.get(sale_url(payment)).get_data(as_text=True)
    assert shown in page and 'href="/panel/counter"' in page
    assert as_staff.get(sale_url(payment, "/status")).json["status"] == status
    assert as_staff.get(sale_url(payment, "/receipt")).status_code == 302


def test_an_open_sale_past_its_expiry_reads_as_expired(as_staff, brand, bkash):
    payment = PaymentFactory(brand=brand, expires_at=utcnow() - timedelta(seconds=1))
    assert as_staff.get(sale_url(payment, "/status")).json["status"] == "expired"


def test_another_brand_s_sale_is_not_found(as_staff, brand, bkash):
    theirs = PaymentFactory(brand=BrandFactory())
    for suffix in ("", "/status", "/receipt"):
        assert as_staff.get(sale_url(theirs, suffix)).status_code == 404
    assert as_staff.get("/panel/counter/not-a-payment/status").status_code == 404


def test_the_counter_sells_in_the_panel_s_mode(as_staff, brand, bkash):
    live = PaymentFactory(brand=brand)
    post_form(as_staff, "/panel/test-mode", {"view": "test"})
    sell(as_staff, bkash, "99")
    test_sale = payments_of(brand)[-1]
    assert test_sale.livemode is False and test_sale.amount == Decimal("99.00")
    assert as_staff.get(sale_url(test_sale, "/status")).status_code == 200
    assert as_staff.get(sale_url(live, "/status")).status_code == 404  # live, while viewing test
    post_form(as_staff, "/panel/test-mode", {"view": "live"})
    assert as_staff.get(sale_url(test_sale, "/status")).status_code == 404
    assert as_staff.get(sale_url(live, "/status")).status_code == 200


def test_the_counter_in_bangla(as_staff, brand, bkash):
    page = as_staff.get("/panel/counter?lang=bn").get_data(as_text=True)
    assert "কাউন্টার" in page and "QR কোড দেখান" in page
    assert csrf_token(as_staff, "/panel/counter")


def test_the_checkout_opens_on_the_number_the_counter_showed(as_staff, brand, bkash):
    nagad = PaymentMethodFactory(brand=brand, provider="nagad", number="01812345678")
    sell(as_staff, nagad, "300")
    [payment] = payments_of(brand)
    page = as_staff.get(f"/checkout/{payment.token}").get_data(as_text=True)
    opened = re.findall(r'<details class="card method" open>.*?</summary>', page, re.S)
    assert len(opened) == 1 and "provider-nagad" in opened[0]
    plain = PaymentFactory(brand=brand)  # no counter metadata: the first number, as before
    page = as_staff.get(f"/checkout/{plain.token}").get_data(as_text=True)
    opened = re.findall(r'<details class="card method" open>.*?</summary>', page, re.S)
    assert len(opened) == 1 and "provider-bkash" in opened[0]


def test_a_sale_shows_the_total_with_the_number_s_fee(as_staff, brand):
    nagad = PaymentMethodFactory(
        brand=brand, provider="nagad", number="01812345678", fee_percent=Decimal("1.5")
    )
    sell(as_staff, nagad, "1000")
    [payment] = payments_of(brand)
    assert (payment.amount, payment.fee, payment.amount_paid) == (
        Decimal("1000.00"),
        Decimal("15.00"),
        Decimal("1015.00"),
    )
    page = as_staff.get(sale_url(payment)).get_data(as_text=True)
    assert "৳1,015.00" in page
    assert as_staff.get(sale_url(payment, "/status")).json["amount_text"] == "৳1,015.00"


def test_the_counter_offers_wallet_numbers_only(as_staff, brand, bkash):
    bank = add_account_method(
        brand,
        "bank",
        bank_name="BRAC Bank",
        account_name="Shop Ltd",
        account_number="1303200002001",
    )
    form = as_staff.get("/panel/counter").get_data(as_text=True)
    assert f'value="{bkash.id}"' in form and f'value="{bank.id}"' not in form
    answer = sell(as_staff, bank, "450")
    assert answer.status_code == 422 and payments_of(brand) == []
