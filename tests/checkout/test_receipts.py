"""The customer's receipt of a paid payment: a page and a PDF, in English and Bangla, only by the
payment's token, only once paid, never indexed; the receipt SMS links to it."""

import io
import re
from decimal import Decimal

import pytest
from freezegun import freeze_time
from pypdf import PdfReader

from gateway.extensions import db
from gateway.payments.refunds import create_refund
from gateway.sms.models.outbound_sms import OutboundSms
from tests.checkout_helpers import text_of
from tests.factories import PaymentFactory, completed_payment

HOSTILE_SHOP = '<script>alert("shop")</script> & Co'


def pdf_text(data):
    """Every page's text, without the control characters shaping leaves between Bangla glyphs."""
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    return re.sub(r"[\x00-\x08\x0b-\x1f]", "", text)


@pytest.fixture
def paid(brand):
    """A paid payment of 500.00 with a fee of 10.00 (510.00 sent), paid 2026-03-01 12:00 UTC."""
    brand.timezone = "Asia/Dhaka"
    with freeze_time("2026-03-01 12:00:00"):
        return completed_payment(
            brand=brand, amount=Decimal("500.00"), fee=Decimal("10.00"), reference="ORDER-9"
        )


def test_the_receipt_page_shows_shop_amounts_method_both_trx_ids_and_local_time(client, paid):
    response = client.get(f"/checkout/{paid.token}/receipt?lang=en")
    page = text_of(response)
    assert response.status_code == 200
    assert response.headers["X-Robots-Tag"] == "noindex, nofollow, noarchive"
    assert '<meta name="robots" content="noindex, nofollow, noarchive">' in page
    assert response.headers["Cache-Control"] == "no-store"
    for expected in (
        "Test Shop",
        "Payment receipt",
        "ORDER-9",
        "৳500.00",  # the amount
        "৳10.00",  # the fee
        "৳510.00",  # the total paid
        "bKash",
        paid.provider_trx_id,
        paid.transaction.trx_id,
        "1 Mar 2026, 18:00",  # Dhaka is UTC+6
        f"/checkout/{paid.token}/receipt.pdf?lang=en",
    ):
        assert expected in page, expected


def test_the_receipt_page_in_bangla_has_bangla_labels_and_digits(client, paid):
    page = text_of(client.get(f"/checkout/{paid.token}/receipt?lang=bn"))
    assert '<html lang="bn">' in page
    assert "৳৫১০.০০" in page and "৳১০.০০" in page
    assert "রসিদ" in page  # "receipt"
    assert paid.provider_trx_id in page


@pytest.mark.parametrize("language", ["en", "bn"])
def test_the_receipt_pdf_parses_and_carries_the_trx_ids(client, paid, language):
    response = client.get(f"/checkout/{paid.token}/receipt.pdf?lang={language}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/pdf"
    assert response.headers["X-Robots-Tag"] == "noindex, nofollow, noarchive"
    assert "attachment;" in response.headers["Content-Disposition"]
    text = pdf_text(response.data)
    assert paid.provider_trx_id in text and paid.transaction.trx_id in text
    if language == "en":
        assert "Payment receipt" in text and "৳510.00" in text and "Total paid" in text
    else:
        assert "৳৫১০.০০" in text and "মোট পরিশোধ" in text and "পেমেন্টের" in text


def test_a_refunded_payment_still_has_its_receipt_saying_what_was_refunded(client, brand, paid):
    create_refund(brand, paid.transaction.trx_id, Decimal("100.00"), "Returned")
    page = text_of(client.get(f"/checkout/{paid.token}/receipt?lang=en"))
    assert "Refunded" in page and "৳100.00" in page


@pytest.mark.parametrize("status", ["created", "processing", "cancelled", "expired", "failed"])
def test_no_receipt_before_the_payment_is_paid(client, brand, status):
    payment = PaymentFactory(brand=brand, status=status)
    for suffix in ("receipt", "receipt.pdf"):
        response = client.get(f"/checkout/{payment.token}/{suffix}")
        assert response.status_code == 404
        assert b"%PDF" not in response.data and b"Payment receipt" not in response.data


@pytest.mark.parametrize("token", ["x" * 32, "x" * 65, "%00", "..%2F..%2Fetc"])
def test_no_receipt_for_a_wrong_token(client, paid, token):
    for suffix in ("receipt", "receipt.pdf", "status"):
        assert client.get(f"/checkout/{token}/{suffix}").status_code == 404
    assert client.get(f"/checkout/{token}").status_code == 404


def test_the_shop_name_is_escaped_on_the_receipt_and_the_pdf_still_renders(client, brand, paid):
    brand.name = HOSTILE_SHOP
    db.session.commit()
    page = text_of(client.get(f"/checkout/{paid.token}/receipt?lang=en"))
    assert HOSTILE_SHOP not in page
    assert "&lt;script&gt;alert(&#34;shop&#34;)&lt;/script&gt; &amp; Co" in page
    assert '<script>alert("shop")' not in page
    assert HOSTILE_SHOP in pdf_text(client.get(f"/checkout/{paid.token}/receipt.pdf").data)


def test_the_paid_checkout_page_offers_the_receipt_in_its_language(client, paid):
    page = text_of(client.get(f"/checkout/{paid.token}?lang=bn"))
    assert f"/checkout/{paid.token}/receipt?lang=bn" in page
    assert f"/checkout/{paid.token}/receipt.pdf?lang=bn" in page


def test_an_unpaid_checkout_page_offers_no_receipt(client, brand):
    payment = PaymentFactory(brand=brand, status="cancelled")
    assert "/receipt" not in text_of(client.get(f"/checkout/{payment.token}"))


def test_the_receipt_sms_links_to_the_receipt_and_stays_within_two_parts(app, brand):
    brand.receipt_sms_enabled = True
    brand.name = "Dhaka Crafts and Handloom Emporium of Old Dhaka"  # cut in the SMS
    db.session.commit()
    payment = completed_payment(brand=brand, customer_phone="+8801712345678")
    [sms] = db.session.execute(db.select(OutboundSms)).scalars().all()
    link = f"{app.config['BASE_URL'].rstrip('/')}/checkout/{payment.token}/receipt"
    assert sms.body.endswith(f"Receipt: {link}")
    assert sms.body.startswith("Dhaka Crafts and Handloom Empo: 500.00 BDT received.")
    assert payment.transaction.trx_id in sms.body
    assert len(sms.body) <= 2 * 153  # two parts of a concatenated GSM SMS


def test_a_payment_in_another_currency_shows_its_amount_and_the_taka_paid(client, brand):
    payment = completed_payment(
        brand=brand,
        amount=Decimal("12.50"),
        currency="USD",
        amount_bdt=Decimal("1475.00"),
        exchange_rate=Decimal("118.0000"),
        fee=Decimal("29.50"),
    )
    page = text_of(client.get(f"/checkout/{payment.token}/receipt?lang=en"))
    for expected in ("$12.50", "Amount in taka", "৳1,475.00", "৳29.50", "৳1,504.50"):
        assert expected in page, expected
