"""The phone watched in the panel: heartbeat, battery, app version and offline on the devices page
(English and Bangla), and the dashboard's flag for payments waiting too long for their SMS."""

from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from gateway.devices.tokens import access_token
from gateway.extensions import db
from tests.factories import PaymentFactory, paired_device
from tests.notifications.conftest import configure
from tests.panel.conftest import admin, as_admin, client  # noqa: F401 - fixtures

NOW = datetime(2024, 5, 10, 9, 30, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def frozen():
    """Every test happens at NOW (a session signed later would look forged)."""
    with freeze_time(NOW):
        yield


def beat(client, device, **body):
    """A heartbeat from the companion app as it sends it."""
    answer = client.post(
        "/api/mobile/v1/devices/heartbeats",
        json=body,
        headers={"Authorization": f"Bearer {access_token(device)}"},
    )
    assert answer.status_code == 200, answer.get_data(as_text=True)


def two_phones(client, brand):
    """One phone heard from two minutes ago (battery, charging, version), one silent for 40
    minutes."""
    fresh, _, _ = paired_device(brand, name="Counter phone")
    quiet, _, _ = paired_device(brand, name="Back office phone")
    with freeze_time(NOW - timedelta(minutes=40)):
        beat(client, quiet, battery_level=12, app_version="2.3.0")
    with freeze_time(NOW - timedelta(minutes=2)):
        beat(client, fresh, battery_level=87, is_charging=True, app_version="2.5.1")
    return fresh, quiet


def row_of(html, name):
    """The table row that names a phone."""
    return html.split(name, 1)[1].split("</tr>", 1)[0]


def test_the_devices_page_shows_heartbeat_battery_version_and_offline(as_admin, brand):
    configure(brand, offline_minutes=30)
    two_phones(as_admin, brand)
    with freeze_time(NOW):
        html = as_admin.get("/panel/devices").get_data(as_text=True)

    fresh = row_of(html, "Counter phone")
    assert "app 2.5.1" in fresh and "battery 87% (charging)" in fresh
    assert "dot-online" in fresh and "Offline" not in fresh
    quiet = row_of(html, "Back office phone")
    assert "app 2.3.0" in quiet and "battery 12%" in quiet
    assert "Offline" in quiet and "no heartbeat for over 30 minutes" in quiet


def test_the_offline_limit_is_the_brand_s_setting(as_admin, brand):
    configure(brand, offline_minutes=60)
    two_phones(as_admin, brand)
    with freeze_time(NOW):
        html = as_admin.get("/panel/devices").get_data(as_text=True)
    assert "Offline" not in row_of(html, "Back office phone")  # 40 minutes is within an hour


def test_the_devices_page_in_bangla(as_admin, brand):
    configure(brand, offline_minutes=30)
    two_phones(as_admin, brand)
    with freeze_time(NOW):
        html = as_admin.get("/panel/devices?lang=bn").get_data(as_text=True)
    fresh = row_of(html, "Counter phone")
    assert "অ্যাপ 2.5.1" in fresh and "ব্যাটারি ৮৭% (চার্জ হচ্ছে)" in fresh
    quiet = row_of(html, "Back office phone")
    assert "অফলাইন" in quiet and "৩০ মিনিটের বেশি কোনো সাড়া নেই" in quiet
    assert "Offline" not in html and "no heartbeat" not in html


def waiting_payment(brand, minutes, **fields):
    """A payment whose customer submitted a TrxID `minutes` ago and whose SMS has not come."""
    return PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id=f"TRX{minutes:04d}AB",
        claimed_at=NOW - timedelta(minutes=minutes),
        **fields,
    )


def test_the_dashboard_flags_payments_waiting_too_long_for_their_sms(as_admin, brand):
    configure(brand, waiting_minutes=20)
    waiting_payment(brand, 5)  # not yet too long
    waiting_payment(brand, 25)
    waiting_payment(brand, 95)
    waiting_payment(brand, 120, review_reason="Amount differs")  # the review queue shows it
    db.session.commit()
    with freeze_time(NOW):
        html = as_admin.get("/panel/dashboard").get_data(as_text=True)
    flag = html.split('class="callout callout-warning waiting-sms"', 1)[1].split("</div>", 1)[0]
    assert "2 payments have waited more than 20 minutes for their SMS" in flag
    assert "The longest for 95 minutes." in flag
    assert 'href="/panel/devices"' in flag and 'href="/panel/sms-inbox"' in flag

    with freeze_time(NOW):
        bangla = as_admin.get("/panel/dashboard?lang=bn").get_data(as_text=True)
    assert "২টি পেমেন্ট ২০ মিনিটের বেশি সময় ধরে এসএমএসের অপেক্ষায় আছে" in bangla


def test_no_flag_when_nothing_waits_too_long(as_admin, brand):
    configure(brand, waiting_minutes=20)
    waiting_payment(brand, 10)
    with freeze_time(NOW):
        html = as_admin.get("/panel/dashboard").get_data(as_text=True)
    assert "waiting-sms" not in html
