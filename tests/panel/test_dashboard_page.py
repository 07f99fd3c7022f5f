"""The dashboard page: today's and 30 days' figures, the review queue, the phone, the chart — one
brand's only.
"""

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.payments.refunds import create_refund
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import submit_claim
from tests.factories import (
    PaymentFactory,
    bkash_text,
    completed_payment,
    paired_device,
    sms_message,
)

NOW = "2024-05-10 08:00:00"  # 14:00 in Dhaka


@pytest.fixture(autouse=True)
def frozen():
    """The whole test, signing in included, happens at NOW (a session signed later would look
    forged).
    """
    with freeze_time(NOW) as clock:
        yield clock


def phone(brand, seen_minutes_ago):
    """A paired phone whose last heartbeat was that long ago."""
    db.session.add(
        Device(
            brand_id=brand.id,
            uuid=str(uuid.uuid4()),
            device_id="pixel",
            name="Shop phone",
            aes_key_sealed="sealed",
            last_heartbeat_at=utcnow() - timedelta(minutes=seen_minutes_ago),
        )
    )
    db.session.commit()


def figure(html, label):
    """The text of the stat card titled `label`."""
    card = html.split(f'<h2 class="stat-label">{label}</h2>')[1].split('<div class="stat">')[0]
    return " ".join(card.split())


def test_the_figures_count_today_and_the_last_30_days(as_staff, brand, other_brand):
    completed_payment(brand=brand, amount=Decimal("1250.00"))
    with freeze_time("2024-05-01 08:00:00"):
        older = completed_payment(brand=brand, amount=Decimal("700.00"))
        create_refund(brand, older.transaction.trx_id, Decimal("200.00"))
    with freeze_time("2024-03-01 08:00:00"):
        completed_payment(brand=brand, amount=Decimal("9999.00"))
    completed_payment(brand=other_brand, amount=Decimal("5555.00"))
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    assert "৳ 1,250.00" in figure(html, "Completed today") and "1 payment" in figure(
        html, "Completed today"
    )
    assert "৳ 1,950.00" in figure(html, "Last 30 days") and "2 payments" in figure(
        html, "Last 30 days"
    )
    assert "৳ 200.00" in figure(html, "Refunds, last 30 days") and "1 refund" in figure(
        html, "Refunds, last 30 days"
    )
    assert "100.00 %" in figure(html, "Success rate")
    assert "5,555" not in html


def test_payments_waiting_for_review_are_counted_and_linked(as_staff, brand):
    PaymentFactory(brand=brand, status="processing", review_reason="SMS amount differs")
    PaymentFactory(brand=brand, status="processing")
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    assert "1 payment is waiting for review" in html
    assert figure(html, "Waiting for review").startswith('<p class="stat-value">1</p>')
    assert 'href="/panel/payments?status=review"' in html


def test_the_companion_phone_shows_its_last_heartbeat(as_staff, brand):
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    assert "Not paired" in figure(html, "Companion phone")
    phone(brand, seen_minutes_ago=5)
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    assert "Online" in figure(html, "Companion phone") and "10 May 2024, 13:55" in figure(
        html, "Companion phone"
    )


def test_a_silent_phone_is_flagged(as_staff, brand):
    phone(brand, seen_minutes_ago=90)
    assert "Not heard from" in figure(
        as_staff.get("/panel/dashboard").get_data(as_text=True), "Companion phone"
    )


def test_the_daily_chart_is_inline_svg_with_a_bar_per_day(as_staff, brand):
    completed_payment(brand=brand, amount=Decimal("500.00"))
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    svg = html.split('<svg class="chart"')[1].split("</svg>")[0]
    assert svg.count('<rect class="bar"') == 30
    assert "10 May: ৳ 500.00 (1)" in svg
    assert "<script" not in svg


def forward_texts(brand, *texts):
    """The brand's phone forwards these texts through the real ingest path."""
    device, _, aes_key = paired_device(brand, device_id=f"phone-{brand.id}")
    ingest_batch(device, [sms_message(aes_key, text) for text in texts])


def test_texts_waiting_for_a_claim_are_counted_listed_and_linked(as_staff, brand, other_brand):
    claimed = PaymentFactory(brand=brand, amount=Decimal("300.00"))
    submit_claim(claimed, "bkash", "7A7A7A7A7A", "01712345678")
    forward_texts(
        brand,
        # Balances that continue one another, as one wallet's texts do (the balance chain checks
        # it).
        bkash_text("450.00", "1B1B1B1B1B", balance="1450.00"),
        bkash_text("1200.00", "2C2C2C2C2C", balance="2650.00"),
        bkash_text("300.00", "7A7A7A7A7A", balance="2950.00"),
    )
    forward_texts(other_brand, bkash_text("999.00", "9Z9Z9Z9Z9Z"))
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    section = html.split('id="waiting-heading"')[1].split("</section>")[0]
    assert "2 texts are waiting for a claim" in section
    assert "1B1B1B1B1B" in section and "2C2C2C2C2C" in section and "৳ 1,200.00" in section
    assert "7A7A7A7A7A" not in section and "9Z9Z9Z9Z9Z" not in section
    assert 'href="/panel/sms-inbox?status=unmatched"' in section


def test_no_waiting_text_says_so(as_staff, brand):
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    section = html.split('id="waiting-heading"')[1].split("</section>")[0]
    assert "No text is waiting" in section and "waiting-list" not in section


def test_one_payment_is_counted_in_the_singular(as_staff, brand):
    completed_payment(brand=brand, amount=Decimal("100.00"))
    html = " ".join(as_staff.get("/panel/dashboard").get_data(as_text=True).split())
    assert "of 1 payment, last 30 days" in html and "1 payments" not in html
