"""Add a phone: the app picker, each app's steps with the exact address and key, the "test text"
check, the phone under Devices, roles, CSRF and escaping.
"""

import html as html_lib
import json
import re
from urllib.parse import urlsplit

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.devices.models.device import Device
from gateway.extensions import db
from tests.factories import bkash_text, paired_device
from tests.forwarder_apps import (
    ping_event,
    signed,
    sms_received_event,
    sms_to_url_body,
    sms_to_url_headers,
)
from tests.fresh_catalogue import app_with_fresh_catalogue, dispose
from tests.panel.conftest import csrf_token, panel_client, post_form, reloaded, sign_in

HOSTILE = '<img src=x onerror="alert(1)">&amp;'


def sms_gateway_ping(key):
    """SMS Gateway's signed system:ping: (body, headers)."""
    return signed(ping_event(), key)


def sms_gateway_text(key, text, sender="bKash"):
    """SMS Gateway's signed sms:received event for one text: (body, headers)."""
    return signed(sms_received_event(text, sender=sender), key)


def sms_to_url_text(name, value, text, sender="bKash"):
    """SMS to URL Forwarder's post of one text with the header typed into it: (body, headers)."""
    return sms_to_url_body(text, sender=sender), sms_to_url_headers(f"{name}: {value}")


def code_text(html, element_id):
    """The text of the <code id=…> that shows something to type into the app."""
    match = re.search(rf'<code id="{element_id}">(.*?)</code>', html, re.S)
    assert match, f"no {element_id} on the page"
    return html_lib.unescape(match.group(1))


def devices():
    """Every device row, oldest first."""
    return db.session.execute(db.select(Device).order_by(Device.id)).scalars().all()


def add(client, app_id, **form):
    """Submit "Add a phone" for an app, as its page's form does."""
    return post_form(client, f"/panel/devices/add/{app_id}", form)


def intake(client, url, body, headers):
    """Post an app's request to the intake URL the page showed."""
    return client.post(urlsplit(url).path, data=body, headers=headers)


def status(client, device):
    """The "test text" check's JSON for a device."""
    response = client.get(f"/panel/devices/{device.uuid}/status")
    assert response.status_code == 200 and response.mimetype == "application/json"
    return response.get_json()


def test_the_picker_offers_the_three_apps_with_where_to_get_them(as_admin):
    html = as_admin.get("/panel/devices/add").get_data(as_text=True)
    for name, path in (
        ("OwnPay Console", "/panel/devices/add/ownpay-console"),
        ("SMS Gateway for Android", "/panel/devices/add/android-sms-gateway"),
        ("SMS to URL Forwarder", "/panel/devices/add/sms-to-url"),
    ):
        assert f">{name}</h2>" in html and f'href="{path}"' in html
    assert "https://github.com/capcom6/android-sms-gateway/releases/latest" in html
    assert "https://f-droid.org/packages/tech.bogomolov.incomingsmsgateway/" in html
    assert "https://github.com/own-pay/OwnPay-Mobile-App" in html
    assert 'href="/panel/devices/add"' in as_admin.get("/panel/devices").get_data(as_text=True)


def test_owners_and_admins_may_add_a_phone_staff_only_see_the_list(as_staff):
    assert "Add a phone" not in as_staff.get("/panel/devices").get_data(as_text=True)
    assert as_staff.get("/panel/devices/add").status_code == 403
    assert add(as_staff, "sms-to-url", label="Sneaky").status_code == 403
    assert devices() == []


def test_ownpay_console_goes_on_to_the_existing_pairing_form(as_admin):
    html = as_admin.get("/panel/devices/add/ownpay-console").get_data(as_text=True)
    assert 'action="/panel/devices/pairing"' in html and 'name="csrf_token"' in html
    assert "https://github.com/own-pay/OwnPay-Mobile-App" in html
    # OwnPay Console pairs; it is no forwarder, so its form is not there and a post is refused.
    assert add(as_admin, "ownpay-console", label="Counter").status_code == 404
    assert devices() == []


def test_sms_gateway_shows_its_url_and_key_once_and_the_apps_signed_text_arrives(
    as_admin, brand, admin
):
    response = add(as_admin, "android-sms-gateway", label="Counter phone")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    (device,) = devices()
    assert (device.name, device.app, device.brand_id) == (
        "Counter phone",
        "android-sms-gateway",
        brand.id,
    )
    url, key = code_text(html, "intake-url"), code_text(html, "signing-key")
    assert device.uuid in url and key not in url and len(key) >= 12
    assert key not in (device.secret_sealed or "")  # sealed at rest, not kept as typed
    # The registration commands carry the exact URL and both events the app needs.
    commands = [code_text(html, f"register-{n}") for n in (1, 2)]
    assert all(f'"url": "{url}"' in command for command in commands)
    assert '"event": "sms:received"' in commands[0] and '"event": "system:ping"' in commands[1]
    assert status(as_admin, device)["heard"] is False

    ping = intake(as_admin, url, *sms_gateway_ping(key))
    assert ping.status_code in (200, 201, 202, 204), ping.get_data(as_text=True)
    pinged = status(as_admin, device)
    assert pinged["heard"] is True and pinged["last_sms_at"] is None
    assert "checked in" in pinged["message"]

    answer = intake(as_admin, url, *sms_gateway_text(key, bkash_text("450.00", "9C4D7E2F1A")))
    assert answer.status_code in (200, 201, 202, 204), answer.get_data(as_text=True)
    arrived = status(as_admin, device)
    assert arrived["last_sms_at"] and "A text arrived" in arrived["message"]
    assert "From bKash" in arrived["message"] and "450.00" in arrived["message"]

    listing = as_admin.get("/panel/devices").get_data(as_text=True)
    row = listing.split("Counter phone", 1)[1].split("</tr>", 1)[0]
    assert "SMS Gateway for Android" in row and "bKash: You have received Tk 450.00" in row
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "device.forwarder_add")
    ).scalar_one()
    assert (entry.user_email, entry.target_id) == (admin.email, device.uuid)
    assert key not in json.dumps(entry.details)


def test_a_wrong_key_is_refused_and_the_check_keeps_waiting(as_admin):
    html = add(as_admin, "android-sms-gateway", label="Counter phone").get_data(as_text=True)
    (device,) = devices()
    body, headers = sms_gateway_text("not-the-key-at-all", bkash_text())
    assert intake(as_admin, code_text(html, "intake-url"), body, headers).status_code == 401
    assert status(as_admin, device)["heard"] is False


def test_the_merchants_own_signing_key_is_the_one_shown_and_checked(as_admin):
    own = "shop-key-2024-xyz"
    html = add(as_admin, "android-sms-gateway", label="Counter phone", signing_key=own).get_data(
        as_text=True
    )
    assert code_text(html, "signing-key") == own
    answer = intake(as_admin, code_text(html, "intake-url"), *sms_gateway_text(own, bkash_text()))
    assert answer.status_code in (200, 201, 202, 204)


@pytest.mark.parametrize(
    "form, field",
    [
        ({"label": ""}, "label"),
        ({"label": "   "}, "label"),
        ({"label": "x" * 121}, "label"),
        ({"label": "Counter", "signing_key": "short"}, "signing_key"),
        ({"label": "Counter", "signing_key": "has a space in it"}, "signing_key"),
    ],
)
def test_a_bad_form_says_which_field_and_makes_nothing(as_admin, form, field):
    response = add(as_admin, "android-sms-gateway", **form)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert f'id="{field}-error"' in html
    assert devices() == []


def test_sms_to_url_shows_its_header_and_the_apps_post_with_it_arrives(as_admin):
    html = add(as_admin, "sms-to-url", label="Spare phone").get_data(as_text=True)
    (device,) = devices()
    assert device.app == "sms-to-url"
    url = code_text(html, "intake-url")
    headers = json.loads(code_text(html, "intake-headers"))
    assert headers["User-agent"] == "SMS Forwarder App"
    (name,) = [header for header in headers if header != "User-agent"]
    assert headers[name] not in url and len(headers[name]) >= 32
    assert "signing-key" not in html  # this app signs nothing

    answer = intake(as_admin, url, *sms_to_url_text(name, headers[name], bkash_text("780.00")))

    assert answer.status_code in (200, 201, 202, 204), answer.get_data(as_text=True)
    assert "780.00" in status(as_admin, device)["message"]
    refused = intake(as_admin, url, *sms_to_url_text(name, "guessed", bkash_text("1.00")))
    assert refused.status_code == 401


def test_the_sms_to_url_form_has_no_signing_key_field(as_admin):
    html = as_admin.get("/panel/devices/add/sms-to-url").get_data(as_text=True)
    assert 'name="label"' in html and 'name="signing_key"' not in html
    gateway = as_admin.get("/panel/devices/add/android-sms-gateway").get_data(as_text=True)
    assert 'name="signing_key"' in gateway


@pytest.mark.parametrize("app_id", ["sms-gateway", "../devices", "OWNPAY-CONSOLE"])
def test_an_unknown_app_is_not_found(as_admin, app_id):
    assert as_admin.get(f"/panel/devices/add/{app_id}").status_code == 404
    assert add(as_admin, app_id, label="Counter").status_code == 404
    assert devices() == []


def test_adding_without_the_csrf_token_is_refused(as_admin):
    csrf_token(as_admin)  # a session exists; only the token is missing
    response = as_admin.post("/panel/devices/add/sms-to-url", data={"label": "Counter"})
    assert response.status_code == 400
    assert devices() == []


def test_a_hostile_label_sender_and_text_are_escaped_everywhere(as_admin):
    html = add(as_admin, "sms-to-url", label=HOSTILE).get_data(as_text=True)
    (device,) = devices()
    assert device.name == HOSTILE
    assert HOSTILE not in html and "&lt;img src=x" in html
    headers = json.loads(code_text(html, "intake-headers"))
    name = next(header for header in headers if header != "User-agent")
    text = '<script>alert("sms")</script> Tk 5.00'
    answer = intake(
        as_admin,
        code_text(html, "intake-url"),
        *sms_to_url_text(name, headers[name], text, sender="<b>Mallory</b>"),
    )
    assert answer.status_code in (200, 201, 202, 204), answer.get_data(as_text=True)

    listing = as_admin.get("/panel/devices").get_data(as_text=True)
    assert HOSTILE not in listing and "&lt;img src=x onerror=" in listing
    assert "<script>alert" not in listing and "<b>Mallory</b>" not in listing
    assert "&lt;b&gt;Mallory&lt;/b&gt;" in listing
    # The JSON carries the text as it came; the page sets it as text (tested in the browser).
    assert status(as_admin, device)["message"].count("<b>Mallory</b>") == 1


def test_the_check_of_another_brands_phone_is_not_found(as_admin, other_brand):
    theirs, _, _ = paired_device(other_brand, name="Their phone")
    assert as_admin.get(f"/panel/devices/{theirs.uuid}/status").status_code == 404
    assert as_admin.get("/panel/devices/not-a-uuid/status").status_code == 404


def test_staff_revoke_a_forwarder_it_is_refused_and_its_check_says_so(app, as_staff, admin):
    owner = panel_client(app)
    assert sign_in(owner, admin).status_code == 302
    html = add(owner, "android-sms-gateway", label="Lost phone").get_data(as_text=True)
    (device,) = devices()
    url, key = code_text(html, "intake-url"), code_text(html, "signing-key")

    revoked = post_form(as_staff, f"/panel/devices/{device.uuid}/revoke", follow_redirects=True)

    assert "Lost phone is revoked" in revoked.get_data(as_text=True)
    assert reloaded(device).revoked_at is not None
    assert intake(as_staff, url, *sms_gateway_text(key, bkash_text())).status_code in (401, 403)
    answer = status(as_staff, device)
    assert answer["revoked"] is True and "revoked" in answer["message"]


def test_the_pairing_page_checks_for_the_phone_its_code_pairs(as_admin, brand, other_brand):
    html = post_form(as_admin, "/panel/devices/pairing").get_data(as_text=True)
    status_url = html_lib.unescape(re.search(r'data-status-url="([^"]+)"', html).group(1))
    code = re.search(r'id="pairing-code">(\d{6})<', html).group(1)
    assert code not in status_url
    assert as_admin.get(status_url).get_json() == {
        "paired": False,
        "heard": False,
        "message": "Waiting for the phone to pair…",
    }
    paired = as_admin.post(
        "/api/mobile/v1/devices",
        json={
            "pairing_code": code,
            "device_id": "phone-1",
            "device_name": "Counter phone",
            "fingerprint": "phone-1",
            "app_version": "2.1.0",
            "platform": "android",
        },
    )
    assert paired.status_code == 201
    answer = as_admin.get(status_url).get_json()
    assert answer["paired"] is True and answer["heard"] is False

    theirs, _, _ = paired_device(other_brand)
    their_code = db.session.execute(
        db.text("SELECT id FROM pairing_codes WHERE brand_id = :b"), {"b": other_brand.id}
    ).scalar_one()
    assert as_admin.get(f"/panel/devices/pairing/{their_code}/status").status_code == 404


@pytest.mark.parametrize(
    "base_url, loopback, plain_http",
    [
        ("http://127.0.0.1:5000", True, True),
        ("http://192.168.1.20:5000", False, True),
        ("https://pay.dhakacrafts.test", False, False),
    ],
)
def test_the_steps_warn_of_an_address_a_phone_cannot_use(
    as_admin, app, monkeypatch, base_url, loopback, plain_http
):
    monkeypatch.setitem(app.config, "BASE_URL", base_url)
    html = add(as_admin, "android-sms-gateway", label="Counter phone").get_data(as_text=True)
    assert code_text(html, "intake-url").startswith(base_url + "/api/forwarders/")
    assert ('id="unreachable-address"' in html) is loopback
    # SMS Gateway for Android posts only to https:// (its insecure build aside).
    assert ('id="https-note"' in html) is plain_http
    other = add(as_admin, "sms-to-url", label="Spare phone").get_data(as_text=True)
    assert 'id="https-note"' not in other  # SMS to URL Forwarder posts to http:// too


def test_the_check_answers_json_never_cached_and_an_sms_to_url_phone_has_no_heartbeat(as_admin):
    add(as_admin, "sms-to-url", label="Spare phone")
    (device,) = devices()
    response = as_admin.get(f"/panel/devices/{device.uuid}/status")
    assert response.headers["Cache-Control"] == "no-store"
    assert response.get_json() == {
        "device": device.uuid,
        "heard": False,
        "revoked": False,
        "last_heartbeat_at": None,
        "last_sms_at": None,
        "message": "Waiting for the phone's first heartbeat or text…",
    }
    listing = as_admin.get("/panel/devices").get_data(as_text=True)
    assert "none: this app sends texts only" in listing and "SMS to URL Forwarder" in listing


def test_the_same_form_sent_again_adds_no_second_phone(as_admin):
    page = as_admin.get("/panel/devices/add/sms-to-url").get_data(as_text=True)
    once = re.search(r'name="once" type="hidden" value="([^"]+)"', page).group(1)
    assert add(as_admin, "sms-to-url", label="Spare phone", once=once).status_code == 200

    again = add(as_admin, "sms-to-url", label="Spare phone", once=once)

    assert again.status_code == 302 and again.headers["Location"].endswith("/panel/devices")
    assert len(devices()) == 1
    listing = as_admin.get("/panel/devices").get_data(as_text=True)
    assert "That phone was added already" in listing
    fresh = as_admin.get("/panel/devices/add/sms-to-url").get_data(as_text=True)
    assert once not in fresh  # a new form is a new phone


def test_add_a_phone_speaks_bangla(app, brand, admin, tmp_path):
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        client = panel_client(bangla)
        sign_in(client, admin)
        picker = client.get("/panel/devices/add?lang=bn").get_data(as_text=True)
        steps = add(client, "android-sms-gateway", label="কাউন্টারের ফোন").get_data(as_text=True)
        (device,) = devices()
        check = client.get(f"/panel/devices/{device.uuid}/status").get_json()
    finally:
        dispose(bangla)
    assert "ফোন যোগ করুন" in picker and "বেছে নিন" in picker and "Choose" not in picker
    assert "কাউন্টারের ফোন যুক্ত করুন" in steps and "ফোনে যা করবেন" in steps
    assert code_text(steps, "signing-key") and "Steps on the phone" not in steps
    assert check["message"] == "ফোনের প্রথম সাড়া বা SMS-এর অপেক্ষায়…"
