"""The panel in Bangla: Bangla digits for amounts, counts, dates and times, day periods instead of
AM/PM, method kinds and audit actions translated, audit times in the brand's zone."""

import re
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.extensions import db
from tests.factories import PaymentFactory, PaymentMethodFactory, completed_payment

NOW = "2024-05-10 09:30:00"  # 15:30 in Dhaka: দুপুর ৩:৩০
WESTERN_DIGIT = re.compile(r"[0-9]")


@pytest.fixture(autouse=True)
def frozen():
    """Every test happens at NOW (a session signed later would look forged)."""
    with freeze_time(NOW):
        yield


def cells(html, css_class):
    """The text of every table cell with that class."""
    found = re.findall(rf'<td class="[^"]*\b{css_class}\b[^"]*"[^>]*>(.*?)</td>', html, re.S)
    return [re.sub(r"<[^>]+>", " ", cell).strip() for cell in found]


def test_the_payments_list_in_bangla_has_bangla_digits_and_no_am_pm(as_admin, brand):
    completed_payment(brand=brand, amount=Decimal("1250.00"), reference="ORDER-1")
    PaymentFactory(brand=brand, amount=Decimal("123456.00"), reference="ORDER-2")
    html = as_admin.get("/panel/payments?lang=bn").get_data(as_text=True)
    assert "২টি পেমেন্ট" in html
    assert cells(html, "card-amount") == ["৳ ১,২৩,৪৫৬.০০", "৳ ১,২৫০.০০"]
    times = cells(html, "card-meta")
    assert times == ["১০ মে ২০২৪, দুপুর ৩:৩০"] * 2
    assert not re.search(r"\b(AM|PM)\b", html)


def test_the_dashboard_in_bangla_counts_in_bangla_digits(as_admin, brand):
    for _ in range(3):
        completed_payment(brand=brand, amount=Decimal("500.00"))
    html = as_admin.get("/panel/dashboard?lang=bn").get_data(as_text=True)
    today = html.split("stat-value", 1)[1].split('<div class="stat">')[0]
    assert "৳ ১,৫০০.০০" in today and "৩টি পেমেন্ট" in today
    assert "১০০.০০ %" in html and "100.00" not in html
    assert not re.search(r"\b(AM|PM)\b", html)


def test_the_settings_page_names_method_kinds_in_bangla(as_admin, brand):
    PaymentMethodFactory(brand=brand, provider="nagad", number="01811223344", kind="merchant")
    PaymentMethodFactory(brand=brand, provider="bkash", number="01711223344", kind="agent")
    html = as_admin.get("/panel/settings?lang=bn").get_data(as_text=True)
    table = html.split('<table class="table cards">')[1].split("</table>")[0]
    assert "মার্চেন্ট" in table and "এজেন্ট" in table
    assert "Merchant" not in table and "Agent" not in table


def test_the_audit_log_names_actions_in_bangla_with_times_in_the_brand_s_zone(as_admin, brand):
    brand.timezone = "Europe/London"
    db.session.commit()
    html = as_admin.get("/panel/audit-log?lang=bn").get_data(as_text=True)
    row = html.split("<tbody>")[1].split("</tr>")[0]
    assert "সাইন ইন" in row and "sign_in" not in row  # the name people read, not the code
    assert "১০ মে ২০২৪, সকাল ১০:৩০:০০" in row  # 09:30 UTC is 10:30 in London in May
    assert "Europe/London" in html


def test_the_audit_log_names_actions_in_english_too(as_admin, brand):
    html = as_admin.get("/panel/audit-log?lang=en").get_data(as_text=True)
    row = html.split("<tbody>")[1].split("</tr>")[0]
    assert "Signed in" in row and "10 May 2024, 15:30:00" in row
    assert '<option value="sign_in">Signed in</option>' in html
