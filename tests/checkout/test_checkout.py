"""The checkout pages for every state of a payment, in English and Bangla, with nothing from other
origins.
"""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from tests.checkout_helpers import text_of
from tests.factories import PaymentFactory, PaymentMethodFactory, completed_payment

EXTERNAL_REFERENCE = re.compile(r'(?:src|href|action)="(https?://[^"]*)"')


@pytest.fixture
def bkash(brand):
    return PaymentMethodFactory(brand=brand, number="01712345678")


def test_pay_page_shows_amount_reference_countdown_and_each_enabled_method(client, brand, bkash):
    brand.primary_color = "#e2136e"
    PaymentMethodFactory(
        brand=brand,
        provider="nagad",
        number="01812345678",
        kind="merchant",
        instructions="Counter 3",
    )
    PaymentMethodFactory(brand=brand, provider="rocket", number="01912345678", enabled=False)
    payment = PaymentFactory(brand=brand, amount=Decimal("1500.00"), reference="ORDER-77")
    response = client.get(f"/checkout/{payment.token}")
    page = text_of(response)
    assert response.status_code == 200
    assert "Test Shop" in page and "৳1,500.00" in page and "ORDER-77" in page
    assert "--brand:#e2136e" in page
    assert "01712345678" in page and "01812345678" in page and "Counter 3" in page
    assert "01912345678" not in page
    assert (
        "<title>QR code of 01712345678</title>" in page
        and "<title>QR code of 01812345678</title>" in page
    )
    assert 'data-copy="01712345678"' in page
    assert "Choose “Send Money”." in page and "Choose “Payment”." in page
    assert "Enter the amount 1500.00." in page
    assert re.search(r'data-countdown="1[78]\d\d"', page)
    assert page.count('name="csrf_token"') == 3  # two claim forms and the cancel form


@freeze_time("2026-03-01 12:00:00")
@pytest.mark.parametrize(
    "zone, shown",
    [("Asia/Dhaka", "6:10 PM"), ("Europe/London", "12:10 PM"), ("Not/AZone", "6:10 PM")],
)
def test_expiry_is_shown_in_the_brands_time_zone(client, brand, bkash, zone, shown):
    brand.timezone = zone
    payment = PaymentFactory(brand=brand, expires_at=utcnow() + timedelta(minutes=10))
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert (
        f"Pay before {shown}".replace(" PM", "\u202fPM") in page
    )  # CLDR puts a narrow space before PM
    assert 'data-countdown="600"' in page


def test_pay_page_without_methods_says_the_shop_has_none(client, brand):
    payment = PaymentFactory(brand=brand)
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "has not set up a way to pay yet" in page


@pytest.mark.parametrize("token", ["no-such-token", "x" * 200])
def test_unknown_token_gets_a_not_found_page(client, token):
    response = client.get(f"/checkout/{token}")
    assert response.status_code == 404
    assert "Payment not found" in text_of(response)
    assert response.mimetype == "text/html"


def test_expired_payment_gets_the_expired_page_with_a_way_back(client, brand, bkash):
    payment = PaymentFactory(brand=brand, status="expired", cancel_url="https://shop.example/cart")
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "This payment has expired" in page
    assert (
        f'href="https://shop.example/cart?payment_id={payment.public_id}&amp;status=expired"'
        in page
    )
    assert 'name="trx_id"' not in page


def test_created_payment_past_its_expiry_reads_as_expired_before_the_sweep(client, brand, bkash):
    payment = PaymentFactory(brand=brand, expires_at=utcnow() - timedelta(seconds=1))
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "This payment has expired" in page
    assert 'name="trx_id"' not in page


def test_cancelled_payment_gets_the_cancelled_page(client, brand):
    payment = PaymentFactory(brand=brand, status="cancelled")
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "Payment cancelled" in page
    assert 'name="trx_id"' not in page


def test_completed_payment_shows_the_receipt_and_the_way_back(client, brand):
    payment = completed_payment(brand=brand, redirect_url="https://shop.example/thanks?order=7")
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "Payment received" in page
    assert payment.transaction.trx_id in page and payment.provider_trx_id in page
    assert (
        f'href="https://shop.example/thanks?order=7&amp;payment_id={payment.public_id}&amp'
        ';status=completed"' in page
    )


def test_failed_payment_says_it_was_not_confirmed(client, brand):
    payment = PaymentFactory(
        brand=brand, status="failed", provider="bkash", provider_trx_id="8N7A6B5C4D"
    )
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "Payment not confirmed" in page and "8N7A6B5C4D" in page


def test_bangla_is_chosen_from_accept_language(client, brand, bkash):
    payment = PaymentFactory(brand=brand)
    page = text_of(
        client.get(
            f"/checkout/{payment.token}", headers={"Accept-Language": "bn-BD,bn;q=0.9,en;q=0.5"}
        )
    )
    assert '<html lang="bn">' in page
    assert "পরিশোধের পরিমাণ" in page and "“সেন্ড মানি” বেছে নিন।" in page
    english = text_of(
        client.get(f"/checkout/{payment.token}", headers={"Accept-Language": "fr,en;q=0.8"})
    )
    assert '<html lang="en">' in english and "Amount to pay" in english


def test_language_switch_is_remembered_for_the_visit(client, brand, bkash):
    payment = PaymentFactory(brand=brand)
    switched = text_of(
        client.get(f"/checkout/{payment.token}?lang=bn", headers={"Accept-Language": "en"})
    )
    assert "পরিশোধের পরিমাণ" in switched
    assert f'href="/checkout/{payment.token}?lang=en"' in switched
    later = text_of(client.get(f"/checkout/{payment.token}", headers={"Accept-Language": "en"}))
    assert "পরিশোধের পরিমাণ" in later
    back = text_of(client.get(f"/checkout/{payment.token}?lang=en"))
    assert "Amount to pay" in back


def test_result_pages_are_translated_too(client, brand):
    payment = PaymentFactory(brand=brand, status="expired")
    page = text_of(client.get(f"/checkout/{payment.token}?lang=bn"))
    assert "এই পেমেন্টের সময় শেষ" in page
    assert "পেমেন্ট খুঁজে পাওয়া যায়নি" in text_of(client.get("/checkout/nope?lang=bn"))


def test_checkout_pages_are_not_cached_framed_or_leaked_to_other_sites(client, brand, bkash):
    payment = PaymentFactory(brand=brand)
    response = client.get(f"/checkout/{payment.token}")
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in response.headers["Content-Security-Policy"]


def test_a_hostile_brand_colour_never_reaches_the_page(client, brand, bkash):
    brand.primary_color = "red;}"
    payment = PaymentFactory(brand=brand)
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "red;}" not in page and "--brand:#0f766e" in page


def test_no_checkout_page_loads_anything_from_another_origin(client, brand, bkash):
    """Every page state: the only absolute URLs are the merchant's own return links."""
    merchant = {
        "redirect_url": "https://shop.example/thanks",
        "cancel_url": "https://shop.example/cart",
    }
    payments = [
        PaymentFactory(brand=brand, status=status, **merchant)
        for status in ("created", "cancelled", "expired", "failed")
    ]
    payments.append(completed_payment(brand=brand, **merchant))
    processing = PaymentFactory(
        brand=brand, status="processing", provider="bkash", provider_trx_id="8N7A6B5C4D"
    )
    urls = [f"/checkout/{p.token}" for p in payments] + [
        f"/checkout/{processing.token}/wait",
        "/checkout/nope",
    ]
    urls += [f"/checkout/{payments[0].token}?lang=bn"]
    for url in urls:
        page = text_of(client.get(url))
        assert "<html" in page, url
        for found in EXTERNAL_REFERENCE.findall(page):
            assert found.startswith("https://shop.example/"), (url, found)
        assert "//cdn" not in page and "googleapis" not in page


def test_the_brands_logo_is_the_one_image_allowed_from_its_own_origin(client, brand, bkash):
    brand.logo_url = "https://assets.shop.example/logo.png"
    payment = PaymentFactory(brand=brand)
    response = client.get(f"/checkout/{payment.token}")
    assert '<img class="logo" src="https://assets.shop.example/logo.png" alt=""' in text_of(
        response
    )
    assert (
        "img-src 'self' data: https://assets.shop.example;"
        in response.headers["Content-Security-Policy"]
    )
