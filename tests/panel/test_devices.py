"""The devices page: phones with their heartbeat, pairing (super-administrators) and revoking; CSRF
and brands.
"""

import re
from datetime import timedelta

import pytest
from freezegun import freeze_time

from gateway.accounts.models.audit import AuditLog
from gateway.clock import utcnow
from gateway.devices.models.device import PairingCode
from gateway.extensions import db
from tests.factories import paired_device
from tests.panel.conftest import audit_actions, post_form, reloaded

CODE = re.compile(r'<p class="pairing-code" id="pairing-code">(\d{6})</p>')


def pair_with(client, code, name="Counter phone"):
    """The companion app's pairing call, with the code read off the page."""
    return client.post(
        "/api/mobile/v1/devices",
        json={
            "pairing_code": code,
            "device_id": "phone-1",
            "device_name": name,
            "fingerprint": "install-1",
            "app_version": "2.1.0",
            "platform": "android",
        },
    )


def test_the_list_shows_each_phone_with_its_last_heartbeat_to_staff(as_staff, brand, other_brand):
    fresh, _, _ = paired_device(brand, name="Counter phone")
    fresh.last_heartbeat_at, fresh.status_json = (
        utcnow() - timedelta(minutes=2),
        {"battery_level": 64},
    )
    quiet, _, _ = paired_device(brand, name="Back office phone")
    quiet.last_heartbeat_at = utcnow() - timedelta(hours=3)
    paired_device(other_brand, name="Their phone")
    db.session.commit()

    html = as_staff.get("/panel/devices").get_data(as_text=True)

    assert "Counter phone" in html and "battery 64%" in html and "dot-online" in html
    assert "Back office phone" in html and "dot-stale" in html and "silent for a while" in html
    assert "Their phone" not in html
    assert "Pair a phone" not in html  # staff do not pair


def test_pairing_shows_the_code_its_qr_and_the_time_left_and_the_code_pairs_a_phone(
    as_admin, brand, admin
):
    with freeze_time(utcnow().replace(microsecond=0)):
        response = post_form(as_admin, "/panel/devices/pairing")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    code = CODE.search(html).group(1)
    assert "<svg" in html and 'data-seconds-left="300"' in html and ">5:00</time>" in html
    assert audit_actions(brand)[-1] == ("device.pairing_code", admin.email, None)
    assert response.headers["Cache-Control"] == "no-store"

    paired = pair_with(as_admin, code)

    assert paired.status_code == 201
    assert "Counter phone" in as_admin.get("/panel/devices").get_data(as_text=True)
    assert pair_with(as_admin, code).get_json()["code"] == "INVALID_PAIRING_CODE"


def test_each_pairing_page_makes_a_new_code(as_admin):
    first = CODE.search(post_form(as_admin, "/panel/devices/pairing").get_data(as_text=True)).group(
        1
    )
    second = CODE.search(
        post_form(as_admin, "/panel/devices/pairing").get_data(as_text=True)
    ).group(1)
    assert db.session.execute(db.select(db.func.count()).select_from(PairingCode)).scalar() == 2
    assert len({first, second}) == 2  # a live code is never handed out twice


def test_staff_cannot_pair_a_phone(as_staff):
    assert post_form(as_staff, "/panel/devices/pairing").status_code == 403
    assert db.session.execute(db.select(PairingCode)).first() is None


def test_staff_revoke_a_phone_its_token_stops_working_and_it_is_audited(as_staff, brand, staff):
    device, tokens, _ = paired_device(brand, name="Lost phone")
    response = post_form(as_staff, f"/panel/devices/{device.uuid}/revoke", follow_redirects=True)
    assert "Lost phone is revoked" in response.get_data(as_text=True)
    assert reloaded(device).revoked_reason == f"revoked in the panel by {staff.email}"
    heartbeat = as_staff.post(
        "/api/mobile/v1/devices/heartbeats",
        json={},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert heartbeat.status_code == 401
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "device.revoke")
    ).scalar_one()
    assert (entry.user_email, entry.target_type, entry.target_id) == (
        staff.email,
        "device",
        device.uuid,
    )


@pytest.mark.parametrize("url", ["/panel/devices/pairing", "/panel/devices/{uuid}/revoke"])
def test_device_forms_without_the_csrf_token_are_refused(as_admin, brand, url):
    device, _, _ = paired_device(brand)
    assert as_admin.post(url.format(uuid=device.uuid)).status_code == 400
    assert reloaded(device).active
    assert (
        db.session.execute(db.select(db.func.count()).select_from(PairingCode)).scalar() == 1
    )  # the factory's own


def test_another_brands_phone_cannot_be_revoked(as_admin, other_brand):
    theirs, _, _ = paired_device(other_brand)
    assert post_form(as_admin, f"/panel/devices/{theirs.uuid}/revoke").status_code == 404
    assert reloaded(theirs).active
