"""Numbers and clock times in the page's language: Bangla digits and day periods, never AM/PM, on bn
pages.
"""

import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.numerals import clock_time, grouped_number, native_digits
from tests.checkout_helpers import text_of
from tests.factories import PaymentFactory, PaymentMethodFactory

DHAKA = ZoneInfo("Asia/Dhaka")


@pytest.mark.parametrize(
    "utc_hour, english, bangla",
    [
        (12, "6:10\u202fPM", "সন্ধ্যা ৬:১০"),
        (3, "9:10\u202fAM", "সকাল ৯:১০"),
        (18, "12:10\u202fAM", "রাত্রি ১২:১০"),
    ],
)
def test_a_clock_time_says_the_part_of_the_day_in_bangla(app, utc_hour, english, bangla):
    moment = datetime(2026, 3, 1, utc_hour, 10, tzinfo=timezone.utc)
    assert clock_time(moment, DHAKA, "en") == english
    assert clock_time(moment, DHAKA, "bn") == bangla


def test_digits_and_grouping_follow_the_language():
    assert native_digits("TrxID 2024, 15:30", "bn") == "TrxID ২০২৪, ১৫:৩০"
    assert native_digits("2024", "en") == "2024"
    assert (grouped_number(12500000, "bn"), grouped_number(12500000, "en")) == (
        "১,২৫,০০,০০০",
        "12,500,000",
    )


@freeze_time("2026-03-01 12:00:00")
def test_the_bangla_checkout_gives_its_deadline_without_pm(client, brand):
    PaymentMethodFactory(brand=brand, number="01712345678")
    payment = PaymentFactory(brand=brand, expires_at=utcnow() + timedelta(minutes=10))
    page = text_of(client.get(f"/checkout/{payment.token}?lang=bn"))
    assert "সন্ধ্যা ৬:১০-এর মধ্যে পরিশোধ করুন" in page
    assert not re.search(r"\b(AM|PM)\b", page)
