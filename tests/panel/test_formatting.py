"""The panel's money and time formats, and the server-drawn chart."""

import re
from datetime import date, datetime, timezone
from decimal import Decimal

import pytest
from flask_babel import refresh
from flask_login import login_user

from gateway.panel.charts import daily_bars, nice_ceiling, short_number
from gateway.panel.formatting import (
    day_bounds,
    kind_name,
    local_date,
    local_datetime,
    money,
    number,
    percent,
)
from tests.factories import UserFactory


@pytest.mark.parametrize(
    "amount, currency, text",
    [
        (Decimal("1250"), "BDT", "৳ 1,250.00"),
        (Decimal("0.5"), "USD", "$ 0.50"),
        (Decimal("1234567.89"), "BDT", "৳ 1,234,567.89"),
        (Decimal("10"), "JPY", "JPY 10.00"),
        (None, "BDT", "—"),
    ],
)
def test_money_reads_with_the_currency_symbol_and_grouping(amount, currency, text):
    assert money(amount, currency) == text


@pytest.fixture
def signed_in_request(app, brand):
    """A request of a user of `brand`, whose zone formats times."""
    with app.test_request_context("/panel/dashboard"):
        login_user(UserFactory(brand=brand))
        yield brand


def test_times_are_shown_in_the_brand_s_zone(signed_in_request):
    moment = datetime(2024, 5, 1, 18, 30, tzinfo=timezone.utc)
    assert local_datetime(moment) == "2 May 2024, 00:30"
    signed_in_request.timezone = "Europe/London"
    assert local_datetime(moment) == "1 May 2024, 19:30"


def test_an_unknown_zone_falls_back_to_dhaka(signed_in_request):
    signed_in_request.timezone = "Nowhere/Atlantis"
    assert local_datetime(datetime(2024, 5, 1, 18, 30, tzinfo=timezone.utc)) == "2 May 2024, 00:30"


def test_a_local_day_filter_spans_the_brand_s_midnight_to_midnight(signed_in_request):
    start, end = day_bounds(date(2024, 5, 2), date(2024, 5, 2))
    assert start == datetime(2024, 5, 1, 18, 0, tzinfo=timezone.utc)
    assert end.replace(microsecond=0) == datetime(2024, 5, 2, 17, 59, 59, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "value, top", [(0, 1), (7, 10), (12, 20), (180, 200), (2100, 2500), (4900, 5000), (5001, 10000)]
)
def test_the_chart_axis_tops_out_at_a_round_number(value, top):
    assert nice_ceiling(Decimal(value)) == top


@pytest.mark.parametrize(
    "value, text", [(0, "0"), (950, "950"), (1000, "1k"), (2500, "2.5k"), (3_000_000, "3M")]
)
def test_axis_labels_are_short(value, text):
    assert short_number(value) == text


def test_bars_are_as_tall_as_their_share_of_the_axis():
    days = [
        {"label": f"{n} May", "value": Decimal(value), "count": 1, "value_text": str(value)}
        for n, value in enumerate([0, 50, 100], start=1)
    ]
    svg = str(daily_bars(days, "Volume <per day>", "Volume", "Day"))
    heights = [
        float(height) for height in re.findall(r'<rect class="bar"[^>]* height="([0-9.]+)"', svg)
    ]
    assert heights == [0.0, 90.0, 180.0]
    assert '<title id="chart-title">Volume &lt;per day&gt;</title>' in svg


@pytest.fixture
def bangla_request(app, brand):
    """A Bangla page's request of a user of `brand` (zone Asia/Dhaka unless changed)."""
    with app.test_request_context("/panel/dashboard?lang=bn"):
        refresh()
        login_user(UserFactory(brand=brand))
        yield brand
    refresh()


def test_bangla_pages_write_money_in_bangla_digits_grouped_by_lakh(bangla_request):
    assert money(Decimal("1234567.5"), "BDT") == "৳ ১২,৩৪,৫৬৭.৫০"
    assert money(Decimal("0.5"), "USD") == "$ ০.৫০"


def test_bangla_counts_and_rates_use_bangla_digits(bangla_request):
    assert (number(1234567), number(0), percent(Decimal("97.50")), percent(None)) == (
        "১২,৩৪,৫৬৭",
        "০",
        "৯৭.৫০ %",
        "—",
    )


def test_a_number_that_is_not_one_is_shown_as_it_came(bangla_request):
    assert (number("85"), number("full")) == ("৮৫", "full")


def test_english_counts_and_rates_keep_western_digits(signed_in_request):
    assert (number(1234567), percent(Decimal("100.00"))) == ("1,234,567", "100.00 %")


@pytest.mark.parametrize(
    "utc_hour, shown",
    [
        (9, "১ মে ২০২৪, দুপুর ৩:৩০"),
        (2, "১ মে ২০২৪, সকাল ৮:৩০"),
        (17, "১ মে ২০২৪, রাত্রি ১১:৩০"),
    ],
)
def test_bangla_times_say_the_part_of_the_day_in_bangla_digits(bangla_request, utc_hour, shown):
    text = local_datetime(datetime(2024, 5, 1, utc_hour, 30, tzinfo=timezone.utc))
    assert text == shown
    assert not re.search(r"[0-9]|AM|PM", text)


def test_bangla_dates_have_no_western_digits(bangla_request):
    assert local_date(date(2024, 5, 2), "d MMM y") == "২ মে ২০২৪"


@pytest.mark.parametrize(
    "kind, english", [("personal", "Personal"), ("agent", "Agent"), ("merchant", "Merchant")]
)
def test_method_kinds_are_named_in_the_page_s_language(app, kind, english):
    with app.test_request_context("/panel/settings?lang=en"):
        refresh()  # the locale is cached on the application context, which the test keeps open
        assert str(kind_name(kind)) == english
    with app.test_request_context("/panel/settings?lang=bn"):
        refresh()
        assert str(kind_name(kind)) != english and not re.search(r"[A-Za-z]", str(kind_name(kind)))


def test_the_chart_s_axis_speaks_bangla_digits(bangla_request):
    svg = str(
        daily_bars(
            [{"label": "১ মে", "value": Decimal("2500"), "count": "৩", "value_text": "৳ ২,৫০০.০০"}],
            "t",
            "v",
            "d",
        )
    )
    axis = re.findall(r'<text class="axis"[^>]*>([^<]*)</text>', svg)
    assert axis and not any(re.search(r"[0-9]", label) for label in axis)
