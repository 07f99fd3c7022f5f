"""The payments list and detail page: filters, search, paging, the timeline, and a brand seeing only
its own.
"""

from datetime import datetime, timezone
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.extensions import db
from gateway.payments.refunds import create_refund
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import PaymentFactory, completed_payment


def listed(client, **query):
    """The references shown by the payments list for a query."""
    html = client.get("/panel/payments", query_string=query).get_data(as_text=True)
    return {
        part.split("<", 1)[0]
        for part in html.split('class="row-link" href="/panel/payments/')[1:]
        for part in [part.split(">", 1)[1]]
    }


@pytest.fixture
def book(brand, other_brand):
    """A few payments of every kind, plus another brand's that must never show."""
    with freeze_time("2024-05-01 10:00:00"):
        paid = completed_payment(
            brand=brand,
            reference="PAID-1",
            customer_phone="+8801712345678",
            customer_email="rahim@example.com",
        )
    with freeze_time("2024-05-03 10:00:00"):
        PaymentFactory(brand=brand, reference="OPEN-1")
        PaymentFactory(
            brand=brand,
            reference="REVIEW-1",
            status="processing",
            provider="nagad",
            provider_trx_id="NG55AA11BB",
            review_reason="SMS amount 450.00 differs from 500.00",
        )
        PaymentFactory(
            brand=brand,
            reference="WAITING-1",
            status="processing",
            provider="bkash",
            provider_trx_id="BK99ZZ88YY",
        )
        PaymentFactory(brand=brand, reference="100%_OFF", status="cancelled")
    PaymentFactory(brand=other_brand, reference="THEIRS-1", customer_phone="+8801712345678")
    return paid


def test_the_list_shows_the_brand_s_payments_newest_first_and_no_other_brand_s(as_staff, book):
    html = as_staff.get("/panel/payments").get_data(as_text=True)
    assert listed(as_staff) == {"PAID-1", "OPEN-1", "REVIEW-1", "WAITING-1", "100%_OFF"}
    assert html.index("100%_OFF") < html.index("PAID-1")
    assert "THEIRS-1" not in html and "5 payments" in html


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"status": "review"}, {"REVIEW-1"}),
        ({"status": "processing"}, {"REVIEW-1", "WAITING-1"}),
        ({"status": "completed"}, {"PAID-1"}),
        ({"method": "nagad"}, {"REVIEW-1"}),
        ({"q": "paid"}, {"PAID-1"}),
        ({"q": "100%"}, {"100%_OFF"}),
        ({"q": "_"}, {"100%_OFF"}),
        ({"q": "bk99zz88yy"}, {"WAITING-1"}),
        ({"q": "01712345678"}, {"PAID-1"}),
        ({"q": "RAHIM@example.com"}, {"PAID-1"}),
        ({"date_from": "2024-05-02"}, {"OPEN-1", "REVIEW-1", "WAITING-1", "100%_OFF"}),
        ({"date_to": "2024-05-01"}, {"PAID-1"}),
        ({"date_from": "2024-05-01", "date_to": "2024-05-01", "status": "completed"}, {"PAID-1"}),
        ({"status": "nonsense"}, {"PAID-1", "OPEN-1", "REVIEW-1", "WAITING-1", "100%_OFF"}),
        ({"date_from": "May 2nd"}, {"PAID-1", "OPEN-1", "REVIEW-1", "WAITING-1", "100%_OFF"}),
    ],
)
def test_the_list_filters_and_searches(as_staff, book, query, expected):
    assert listed(as_staff, **query) == expected


def test_the_list_finds_a_payment_by_our_trx_id_and_payment_id(as_staff, book):
    assert listed(as_staff, q=book.transaction.trx_id.lower()) == {"PAID-1"}
    assert listed(as_staff, q=book.public_id) == {"PAID-1"}


def test_dates_are_the_brand_s_local_days(as_staff, brand):
    # 19:00 UTC on 1 May is 01:00 on 2 May in Dhaka.
    with freeze_time("2024-05-01 19:00:00"):
        PaymentFactory(brand=brand, reference="LATE-NIGHT")
    assert listed(as_staff, date_from="2024-05-02", date_to="2024-05-02") == {"LATE-NIGHT"}
    assert listed(as_staff, date_to="2024-05-01") == set()


def test_the_list_is_paginated_keeping_the_filters(as_staff, brand):
    for number in range(27):
        PaymentFactory(brand=brand, reference=f"BULK-{number:02d}", status="cancelled")
    first = as_staff.get("/panel/payments?status=cancelled").get_data(as_text=True)
    assert "Page 1 of 2" in first and 'href="/panel/payments?page=2&amp;status=cancelled"' in first
    assert len(listed(as_staff, status="cancelled", page=2)) == 2
    assert len(listed(as_staff, status="cancelled", page="x")) == 25


def test_the_detail_page_shows_the_facts_in_the_brand_s_money_and_time(as_staff, brand):
    with freeze_time("2024-05-01 18:30:00"):
        payment = completed_payment(
            brand=brand,
            amount=Decimal("1250.00"),
            reference="ORDER-77",
            customer_name="Rahim",
            metadata_json={"order": "77"},
        )
    html = as_staff.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
    assert "৳ 1,250.00" in html and "ORDER-77" in html and payment.transaction.trx_id in html
    assert "2 May 2024, 00:30" in html  # 18:30 UTC is 00:30 the next day in Dhaka
    assert "Rahim" in html and ">order</dt>" in html


def test_the_timeline_tells_the_whole_story(as_staff, brand):
    with freeze_time("2024-05-01 10:00:00"):
        payment = PaymentFactory(
            brand=brand,
            status="processing",
            provider="bkash",
            provider_trx_id="BK12AB34CD",
            claimed_at=datetime(2024, 5, 1, 10, 1, tzinfo=timezone.utc),
            sender_number="01712345678",
        )
        db.session.add(
            InboundSms(
                public_id="sms-1",
                brand_id=brand.id,
                sender="bKash",
                content_hash="h1",
                body="You have received Tk 500.00 from 01712345678. TrxID BK12AB34CD",
                provider="bkash",
                incoming=True,
                amount=Decimal("500.00"),
                provider_trx_id="BK12AB34CD",
                counterparty="01712345678",
                status="matched",
                payment_id=payment.id,
                matched_at=datetime(2024, 5, 1, 10, 2, tzinfo=timezone.utc),
            )
        )
        db.session.commit()
    with freeze_time("2024-05-01 10:02:00"):
        from gateway.payments.lifecycle import complete_payment

        complete_payment(payment)
    with freeze_time("2024-05-01 11:00:00"):
        create_refund(brand, payment.transaction.trx_id, Decimal("100.00"), "Broken item")
    delivery = WebhookDelivery(
        brand_id=brand.id,
        payment_id=payment.id,
        event="payment.completed",
        event_id="evt_1",
        url="https://shop.example/hook",
        payload="{}",
        status="sent",
        attempts=2,
        created_at=datetime(2024, 5, 1, 10, 2, 1, tzinfo=timezone.utc),
    )
    db.session.add(delivery)
    db.session.flush()
    db.session.add_all(
        [
            WebhookAttempt(
                delivery_id=delivery.id,
                attempted_at=datetime(2024, 5, 1, 10, 2, 2, tzinfo=timezone.utc),
                response_status=500,
                duration_ms=40,
            ),
            WebhookAttempt(
                delivery_id=delivery.id,
                attempted_at=datetime(2024, 5, 1, 10, 3, 2, tzinfo=timezone.utc),
                response_status=200,
                duration_ms=30,
            ),
        ]
    )
    db.session.commit()
    html = (
        as_staff.get(f"/panel/payments/{payment.public_id}")
        .get_data(as_text=True)
        .split('id="timeline-heading"')[1]
    )
    story = [
        "Payment created",
        "Customer submitted a transaction ID",
        "SMS matched",
        "Completed",
        "Webhook payment.completed",
        "Refunded ৳ 100.00",
    ]
    positions = [html.index(title) for title in story]
    assert positions == sorted(positions)
    assert "TrxID BK12AB34CD" in html and "Broken item" in html
    assert "Attempt at 16:02:02: 500" in html and "Attempt at 16:03:02: 200" in html


def test_a_payment_waiting_for_review_shows_why_and_the_buttons(as_staff, book):
    review = db.session.execute(
        db.select(type(book)).where(type(book).reference == "REVIEW-1")
    ).scalar_one()
    html = as_staff.get(f"/panel/payments/{review.public_id}").get_data(as_text=True)
    assert "Waiting for your review" in html and "SMS amount 450.00 differs from 500.00" in html
    assert f'action="/panel/payments/{review.public_id}/approve"' in html
    assert f'action="/panel/payments/{review.public_id}/reject"' in html


def test_a_processing_payment_without_a_review_reason_offers_no_approval(as_staff, book):
    waiting = db.session.execute(
        db.select(type(book)).where(type(book).reference == "WAITING-1")
    ).scalar_one()
    html = as_staff.get(f"/panel/payments/{waiting.public_id}").get_data(as_text=True)
    assert "/approve" not in html and "/reject" not in html and "/cancel" in html


def test_another_brand_s_payment_reads_as_not_found(as_staff, other_brand):
    theirs = completed_payment(brand=other_brand)
    response = as_staff.get(f"/panel/payments/{theirs.public_id}")
    assert response.status_code == 404
    assert theirs.reference not in response.get_data(as_text=True)
