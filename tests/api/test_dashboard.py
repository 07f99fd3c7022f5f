"""GET /dashboard/summary: figures checked against the rows behind them, days in the brand's
zone."""

from datetime import date, datetime, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from freezegun import freeze_time

from gateway.extensions import db
from gateway.payments.dashboard import dashboard_summary, local_days
from gateway.payments.refunds import create_refund
from tests.factories import PaymentFactory, completed_payment

# 20:00 UTC on 10 May is 02:00 on 11 May in Dhaka (UTC+6): "today" there is the 11th.
NOW = "2024-05-10 20:00:00"


def paid_at(moment, brand, amount, currency="BDT"):
    """A payment completed at a frozen UTC moment."""
    with freeze_time(moment):
        return completed_payment(brand=brand, amount=Decimal(amount), currency=currency)


@pytest.fixture
def history(brand, other_brand):
    """Payments of every kind around Dhaka's midnights, plus another brand's that must not count."""
    paid_at("2024-05-10 18:30:00", brand, "100.00")  # 00:30 on the 11th in Dhaka: today
    paid_at("2024-05-10 19:00:00", brand, "10.00", "USD")  # today, another currency
    paid_at("2024-05-10 17:59:59", brand, "200.00")  # 23:59:59 on the 10th: yesterday
    partly = paid_at("2024-05-01 06:00:00", brand, "500.00")
    fully = paid_at(
        "2024-04-11 18:00:00", brand, "50.00"
    )  # 00:00 on 12 April: first day of the window
    paid_at("2024-04-11 17:59:59", brand, "70.00")  # 11 April: before the window, still in totals
    with freeze_time("2024-05-09 10:00:00"):
        create_refund(brand, partly.transaction.trx_id, Decimal("120.00"))
        create_refund(brand, fully.transaction.trx_id)
    for status in ("created", "processing", "cancelled", "expired", "failed"):
        PaymentFactory(brand=brand, status=status, amount=Decimal("999.00"))
    PaymentFactory(brand=brand, status="cancelled")
    paid_at("2024-05-10 19:30:00", other_brand, "5000.00")


def test_summary_counts_volumes_and_success_rate(brand, history):
    summary = dashboard_summary(brand, now=datetime(2024, 5, 10, 20, tzinfo=timezone.utc))

    assert summary["counts"] == {
        "created": 1,
        "processing": 1,
        "completed": 4,
        "partially_refunded": 1,
        "refunded": 1,
        "cancelled": 2,
        "expired": 1,
        "failed": 1,
    }
    assert summary["total_count"] == 12
    assert summary["completed_volume"] == {"BDT": Decimal("920.00"), "USD": Decimal("10.00")}
    assert summary["refunded_volume"] == {"BDT": Decimal("170.00"), "USD": Decimal("0.00")}
    assert summary["net_volume"] == {"BDT": Decimal("750.00"), "USD": Decimal("10.00")}
    assert summary["success_rate"] == Decimal("50.00")  # 6 paid of 12


@pytest.fixture
def refunded_with_fees(brand):
    """Two ৳ payments with an ৳18.50 method fee, the brand refunding fees: 500.00 refunded whole
    (518.50 returned), 1000.00 refunded 400.00; and 20.00 USD kept."""
    brand.refund_fee = True
    db.session.commit()
    whole = completed_payment(brand=brand, amount=Decimal("500.00"), fee=Decimal("18.50"))
    partly = completed_payment(brand=brand, amount=Decimal("1000.00"), fee=Decimal("18.50"))
    completed_payment(brand=brand, amount=Decimal("20.00"), currency="USD")
    create_refund(brand, whole.transaction.trx_id)
    create_refund(brand, partly.transaction.trx_id, Decimal("400.00"))


def test_net_volume_takes_off_refunds_but_not_a_refunded_fee(brand, refunded_with_fees):
    summary = dashboard_summary(brand)

    assert summary["completed_volume"] == {"BDT": Decimal("1500.00"), "USD": Decimal("20.00")}
    assert summary["refunded_volume"] == {"BDT": Decimal("918.50"), "USD": Decimal("0.00")}
    assert summary["net_volume"] == {"BDT": Decimal("600.00"), "USD": Decimal("20.00")}


def test_summary_endpoint_never_shows_a_negative_net_volume(client, auth, brand):
    brand.refund_fee = True
    db.session.commit()
    payment = completed_payment(brand=brand, amount=Decimal("500.00"), fee=Decimal("18.50"))
    create_refund(brand, payment.transaction.trx_id)

    data = client.get("/api/v1/dashboard/summary", headers=auth).get_json()["data"]

    assert data["refunded_volume"]["BDT"] == "518.50"
    assert data["net_volume"] == {"BDT": "0.00", "USD": "0.00"}


def test_days_are_counted_in_dhaka_time(brand, history):
    summary = dashboard_summary(brand, now=datetime(2024, 5, 10, 20, tzinfo=timezone.utc))
    daily = summary["daily"]

    assert summary["timezone"] == "Asia/Dhaka"
    assert len(daily) == 30
    assert (daily[0]["date"], daily[-1]["date"]) == (date(2024, 4, 12), date(2024, 5, 11))
    assert summary["today"] == daily[-1]
    assert daily[-1] == {
        "date": date(2024, 5, 11),
        "count": 2,
        "volume": {"BDT": Decimal("100.00"), "USD": Decimal("10.00")},
    }
    assert daily[-2] == {
        "date": date(2024, 5, 10),
        "count": 1,
        "volume": {"BDT": Decimal("200.00"), "USD": Decimal("0.00")},
    }
    assert daily[0] == {
        "date": date(2024, 4, 12),
        "count": 1,
        "volume": {"BDT": Decimal("50.00"), "USD": Decimal("0.00")},
    }
    by_date = {day["date"]: day for day in daily}
    assert by_date[date(2024, 5, 1)]["volume"]["BDT"] == Decimal(
        "500.00"
    )  # gross, refunds not netted
    assert sum(day["count"] for day in daily) == 5


def test_days_follow_the_brands_own_time_zone(brand, history):
    brand.timezone = "UTC"
    db.session.commit()

    daily = dashboard_summary(brand, now=datetime(2024, 5, 10, 20, tzinfo=timezone.utc))["daily"]

    assert daily[-1] == {
        "date": date(2024, 5, 10),
        "count": 3,
        "volume": {"BDT": Decimal("300.00"), "USD": Decimal("10.00")},
    }
    assert daily[0]["date"] == date(2024, 4, 11)
    assert daily[0]["count"] == 2  # 18:00 and 17:59:59 on 11 April are both that UTC day


def test_local_days_begin_at_local_midnight_in_utc():
    dates, starts, end = local_days(
        ZoneInfo("Asia/Dhaka"), datetime(2024, 5, 10, 17, 59, tzinfo=timezone.utc), days=2
    )

    assert dates == [date(2024, 5, 9), date(2024, 5, 10)]
    assert starts == [
        datetime(2024, 5, 8, 18, tzinfo=timezone.utc),
        datetime(2024, 5, 9, 18, tzinfo=timezone.utc),
    ]
    assert end == datetime(2024, 5, 10, 18, tzinfo=timezone.utc)


def test_summary_endpoint_renders_amounts_as_strings(client, auth, brand, history):
    with freeze_time(NOW):
        response = client.get("/api/v1/dashboard/summary", headers=auth)

    assert response.status_code == 200
    data = response.get_json()["data"]
    assert data["generated_at"] == "2024-05-10T20:00:00+00:00"
    assert data["counts"]["completed"] == 4
    assert data["completed_volume"] == {"BDT": "920.00", "USD": "10.00"}
    assert data["refunded_volume"] == {"BDT": "170.00", "USD": "0.00"}
    assert data["success_rate"] == "50.00"
    assert data["today"] == {
        "date": "2024-05-11",
        "count": 2,
        "volume": {"BDT": "100.00", "USD": "10.00"},
    }
    assert len(data["daily"]) == 30 and data["daily"][-1] == data["today"]


def test_summary_of_a_brand_without_payments(client, auth, brand):
    with freeze_time(NOW):
        data = client.get("/api/v1/dashboard/summary", headers=auth).get_json()["data"]

    assert data["total_count"] == 0
    assert data["success_rate"] is None
    assert data["completed_volume"] == {"BDT": "0.00", "USD": "0.00"}
    assert {day["count"] for day in data["daily"]} == {0}


def test_summary_needs_a_valid_read_key(client, brand, make_key):
    assert client.get("/api/v1/dashboard/summary").get_json()["code"] == "MISSING_TOKEN"
    refused = client.get("/api/v1/dashboard/summary", headers=make_key(brand, ["write"]))
    assert (refused.status_code, refused.get_json()["code"]) == (403, "INSUFFICIENT_SCOPE")


def test_status_counts_and_success_rate_for_today_and_the_last_30_days(brand, history):
    with freeze_time("2024-05-10 19:10:00"):  # 01:10 today in Dhaka, still open
        PaymentFactory(brand=brand, status="created")

    windows = dashboard_summary(brand, now=datetime(2024, 5, 10, 20, tzinfo=timezone.utc))[
        "windows"
    ]

    today, month = windows["today"], windows["last_30_days"]
    assert (today["counts"]["completed"], today["counts"]["created"], today["total_count"]) == (
        2,
        1,
        3,
    )
    assert today["success_rate"] == Decimal("66.67")
    # The 10th, 1 May and 12 April (local) are in the window; 11 April and the open rows made "now"
    # are not.
    assert month["counts"] == {
        "created": 1,
        "processing": 0,
        "completed": 3,
        "partially_refunded": 1,
        "refunded": 1,
        "cancelled": 0,
        "expired": 0,
        "failed": 0,
    }
    assert month["success_rate"] == Decimal("83.33")


def test_summary_endpoint_carries_the_windows(client, auth, brand, history):
    with freeze_time(NOW):
        data = client.get("/api/v1/dashboard/summary", headers=auth).get_json()["data"]

    assert data["windows"]["today"]["success_rate"] == "100.00"
    assert data["windows"]["last_30_days"]["total_count"] == 5
