"""OwnPay Console (github.com/own-pay/OwnPay-Mobile-App, Flutter) against /api/mobile/v1, replayed
request by request from its source; each test asserts the fields the app's models read.

Where each shape comes from in the app (lib/…):
- core/network/api_client.dart: a success body whose `data` is an object is unwrapped to it
  (`_unwrap`); a `data` list passes through whole. A 4xx other than 401 is shown as `error` when
  that is a non-empty string, else `message`, else "The request was rejected." (`_mapError`; Dart's
  `??` falls back only on null, so `error: true` hid every message).
- features/pairing/data/device_repository.dart: pairing posts {pairing_code, device_name,
  device_id, app_version "1.0.0", platform "android"} (no fingerprint) and stores access_token,
  refresh_token, aes_key, device_uuid; a refresh posts {refresh_token, fingerprint: device_id}.
  core/storage/secure_store.dart: the device_id is 32 random hex digits, kept per install.
- core/network/auth_interceptor.dart: a 401 triggers one refresh, then the request again.
- features/dashboard/domain/dashboard_snapshot.dart: `today.revenue` (a decimal string, parsed as a
  Decimal), `today.total`, `today.pending`, `unread_notifications`, and `recent_transactions[]`
  of {trx_id, amount (decimal string), currency, status, gateway, created_at}.
- features/notifications/data/network_notification_repository.dart and
  domain/app_notification.dart: `data` is the list of {id (int), type, title, body, created_at};
  handled ids go back as POST /notifications/acknowledgements {ids: [int]}.
"""

import secrets
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.devices.models.device import Device
from gateway.devices.models.notification import Notification
from gateway.devices.pairing import REFUSED, create_pairing_code
from gateway.extensions import db
from gateway.payments.models.payment import Transaction
from tests.factories import PaymentFactory, completed_payment, paired_device
from tests.limited_apps import limited_app as rate_limited

API = "/api/mobile/v1"
GENERIC = "The request was rejected."
# 20:00 UTC on 10 May is 02:00 on 11 May in Dhaka (UTC+6): the brand's "today" is the 11th.
NOW = "2024-05-10 20:00:00"


def shown_message(response):
    """What the app shows for a refused request (api_client.dart `_mapError`)."""
    assert 400 <= response.status_code < 500 and response.status_code != 401
    body = response.get_json(silent=True)
    if isinstance(body, dict):
        server = body["error"] if body.get("error") is not None else body.get("message")
        if isinstance(server, str) and server:
            return server
    return GENERIC


def unwrapped(response):
    """The payload the app's callers receive (api_client.dart `_unwrap`)."""
    body = response.get_json()
    return body["data"] if isinstance(body.get("data"), dict) else body


def app_device_id():
    """A device id as the app mints it once per install: 32 random hex digits."""
    return secrets.token_hex(16)


def app_pairing(client, code, device_id):
    """POST /devices exactly as device_repository.dart `pair` sends it."""
    return client.post(
        f"{API}/devices",
        json={
            "pairing_code": code,
            "device_name": "Counter phone",
            "device_id": device_id,
            "app_version": "1.0.0",
            "platform": "android",
        },
    )


def app_refresh(client, refresh_token, device_id):
    """POST /devices/token-refreshes exactly as device_repository.dart `refresh` sends it."""
    return client.post(
        f"{API}/devices/token-refreshes",
        json={"refresh_token": refresh_token, "fingerprint": device_id},
    )


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def test_the_app_pairs_without_a_fingerprint_and_refreshes_with_its_device_id(client, brand):
    device_id = app_device_id()

    paired = app_pairing(client, create_pairing_code(brand), device_id)

    assert paired.status_code == 201
    stored = unwrapped(paired)
    assert all(stored[key] for key in ("access_token", "refresh_token", "aes_key", "device_uuid"))
    device = db.session.execute(db.select(Device)).scalar_one()
    assert (device.uuid, device.device_id, device.fingerprint) == (
        stored["device_uuid"],
        device_id,
        device_id,
    )
    refreshed = app_refresh(client, stored["refresh_token"], device_id)
    assert refreshed.status_code == 200
    rotated = unwrapped(refreshed)
    assert rotated["access_token"] and rotated["refresh_token"] != stored["refresh_token"]
    dashboard = client.get(f"{API}/dashboard", headers=bearer(rotated["access_token"]))
    assert dashboard.status_code == 200


def test_a_refresh_presenting_another_device_id_is_refused_and_unpairs_nothing(client, brand):
    device_id = app_device_id()
    stored = unwrapped(app_pairing(client, create_pairing_code(brand), device_id))

    stolen = app_refresh(client, stored["refresh_token"], app_device_id())

    assert stolen.status_code == 401
    assert stolen.get_json()["code"] == "FINGERPRINT_MISMATCH"
    assert db.session.execute(db.select(Device.revoked_at)).scalar_one() is None
    assert app_refresh(client, stored["refresh_token"], device_id).status_code == 200


def test_an_expired_access_token_is_renewed_as_the_apps_interceptor_does(client, brand):
    device_id = app_device_id()
    with freeze_time(NOW) as frozen:
        stored = unwrapped(app_pairing(client, create_pairing_code(brand), device_id))
        frozen.tick(timedelta(minutes=16))
        expired = client.get(f"{API}/dashboard", headers=bearer(stored["access_token"]))
        assert expired.status_code == 401

        renewed = unwrapped(app_refresh(client, stored["refresh_token"], device_id))
        again = client.get(f"{API}/dashboard", headers=bearer(renewed["access_token"]))

    assert again.status_code == 200
    assert unwrapped(again)["today"]["revenue"] == "0.00"


def paid_at(moment, brand, amount, currency="BDT"):
    """A payment created and completed at a frozen UTC moment."""
    with freeze_time(moment):
        return completed_payment(brand=brand, amount=Decimal(amount), currency=currency)


def created_at(moment, brand, status):
    """A payment created at a frozen UTC moment, left in `status`."""
    with freeze_time(moment):
        return PaymentFactory(brand=brand, status=status, amount=Decimal("999.00"))


@pytest.fixture
def shop_day(brand, other_brand):
    """Payments around Dhaka's midnight, and another brand's that must not count."""
    paid = [
        paid_at("2024-05-10 17:59:59", brand, "200.00"),  # 23:59:59 on the 10th: yesterday
        paid_at("2024-05-10 18:30:00", brand, "100.00"),  # 00:30 on the 11th: today
        paid_at("2024-05-10 19:00:00", brand, "10.50", "USD"),  # today, the second currency
    ]
    created_at("2024-05-10 12:00:00", brand, "processing")  # open, but made yesterday
    created_at("2024-05-10 19:30:00", brand, "processing")  # today: waiting for its SMS
    created_at("2024-05-10 19:40:00", brand, "created")  # today: not paid yet
    created_at("2024-05-10 19:45:00", brand, "cancelled")  # today, closed
    paid_at("2024-05-10 19:50:00", other_brand, "5000.00")
    return paid


def test_the_dashboard_shows_todays_money_and_payments_in_the_brands_time_zone(
    client, brand, shop_day
):
    with freeze_time(NOW):
        _, tokens, _ = paired_device(brand, device_id=app_device_id())
        response = client.get(f"{API}/dashboard", headers=bearer(tokens["access_token"]))

    assert response.status_code == 200
    snapshot = unwrapped(response)
    today = snapshot["today"]
    # DashboardSnapshot.fromApi: revenue is parsed as a Decimal, so it travels as a string.
    assert isinstance(today["revenue"], str) and Decimal(today["revenue"]) == Decimal("100.00")
    assert (today["total"], today["pending"]) == (5, 2)
    assert today["currency"] == "BDT" and today["date"] == "2024-05-11"
    assert (today["completed"], today["volume"]) == (2, {"BDT": "100.00", "USD": "10.50"})


@pytest.mark.parametrize("currencies, amount", [("BDT,USD", "100.00"), ("USD,BDT", "10.50")])
def test_completed_today_amount_is_todays_revenue_in_the_brands_first_currency(
    client, brand, shop_day, currencies, amount
):
    """Taka and dollars completed today are never added into one figure."""
    brand.currencies = currencies
    db.session.commit()
    with freeze_time(NOW):
        _, tokens, _ = paired_device(brand, device_id=app_device_id())
        snapshot = unwrapped(client.get(f"{API}/dashboard", headers=bearer(tokens["access_token"])))

    assert snapshot["payments"]["completed_today_amount"] == amount
    assert snapshot["today"]["revenue"] == amount


@pytest.mark.parametrize(
    "zone, date", [("America/New_York", "2024-05-10"), ("Mars/Olympus_Mons", "2024-05-11")]
)
def test_today_follows_the_brands_own_time_zone_or_the_default(client, brand, zone, date):
    brand.timezone = zone  # an unknown zone (a hand-edited row) falls back to Asia/Dhaka
    db.session.commit()
    paid_at("2024-05-10 03:59:00", brand, "1.00")  # 23:59 on the 9th in New York
    paid_at("2024-05-10 04:00:00", brand, "2.00")  # midnight of the 10th in New York
    paid_at("2024-05-10 18:00:00", brand, "4.00")  # midnight of the 11th in Dhaka
    with freeze_time(NOW):
        _, tokens, _ = paired_device(brand, device_id=app_device_id())
        response = client.get(f"{API}/dashboard", headers=bearer(tokens["access_token"]))

    assert response.status_code == 200
    today = unwrapped(response)["today"]
    expected = "6.00" if zone == "America/New_York" else "4.00"
    assert (today["date"], today["revenue"]) == (date, expected)


def test_the_dashboard_lists_recent_transactions_newest_first(client, brand, shop_day):
    with freeze_time(NOW):
        _, tokens, _ = paired_device(brand, device_id=app_device_id())
        snapshot = unwrapped(client.get(f"{API}/dashboard", headers=bearer(tokens["access_token"])))

    recent = snapshot["recent_transactions"]
    expected = [payment.transaction for payment in reversed(shop_day)]
    assert [t["trx_id"] for t in recent] == [t.trx_id for t in expected]
    assert [(t["amount"], t["currency"], t["status"], t["gateway"]) for t in recent] == [
        ("10.50", "USD", "completed", "bkash"),
        ("100.00", "BDT", "completed", "bkash"),
        ("200.00", "BDT", "completed", "bkash"),
    ]
    # DashboardTransaction.fromMap: amounts as Decimals, times as DateTime.tryParse reads them.
    assert [Decimal(t["amount"]) for t in recent] == [Decimal("10.50"), Decimal(100), Decimal(200)]
    assert datetime.fromisoformat(recent[1]["created_at"]) == datetime.fromisoformat(
        "2024-05-10T18:30:00+00:00"
    )
    assert [t["provider_trx_id"] for t in recent] == [t.provider_trx_id for t in expected]


def test_the_dashboard_shows_at_most_ten_recent_transactions(client, brand):
    with freeze_time(NOW):
        for _ in range(12):
            completed_payment(brand=brand)
        _, tokens, _ = paired_device(brand, device_id=app_device_id())
        snapshot = unwrapped(client.get(f"{API}/dashboard", headers=bearer(tokens["access_token"])))

    newest = db.session.execute(
        db.select(Transaction.trx_id).order_by(Transaction.id.desc()).limit(10)
    ).scalars()
    assert [t["trx_id"] for t in snapshot["recent_transactions"]] == list(newest)
    assert snapshot["today"] | {"volume": None} == {
        "date": "2024-05-11",
        "currency": "BDT",
        "revenue": "6000.00",
        "completed": 12,
        "total": 12,
        "pending": 0,
        "volume": None,
    }


def test_the_dashboard_counts_this_phones_unread_notifications(client, brand, other_brand):
    device, tokens, _ = paired_device(brand, device_id=app_device_id())
    other_phone, _, _ = paired_device(brand, device_id=app_device_id())
    db.session.add_all(
        [
            Notification(brand_id=brand.id, kind="payment.review", title="Brand-wide"),
            Notification(brand_id=brand.id, device_id=device.id, kind="x", title="Mine"),
            Notification(brand_id=brand.id, device_id=other_phone.id, kind="x", title="Theirs"),
            Notification(brand_id=other_brand.id, kind="x", title="Another shop's"),
        ]
    )
    db.session.commit()
    headers = bearer(tokens["access_token"])
    listed = client.get(f"{API}/notifications", headers=headers).get_json()["data"]
    # Its own pairing's notice too; not the other phone's, nor what is addressed to it alone.
    assert sorted(n["title"] for n in listed) == ["Brand-wide", "Mine", "Shop phone paired"]

    assert unwrapped(client.get(f"{API}/dashboard", headers=headers))["unread_notifications"] == 3
    client.post(
        f"{API}/notifications/acknowledgements", headers=headers, json={"ids": [listed[0]["id"]]}
    )
    assert unwrapped(client.get(f"{API}/dashboard", headers=headers))["unread_notifications"] == 2


def test_notifications_arrive_as_the_data_list_and_are_acknowledged_by_id(client, brand):
    device, tokens, _ = paired_device(brand, device_id=app_device_id())
    db.session.add(
        Notification(
            brand_id=brand.id, kind="payment.review", title="Check ORDER-7", body="No balance"
        )
    )
    db.session.commit()
    headers = bearer(tokens["access_token"])

    body = client.get(f"{API}/notifications", headers=headers).get_json()

    # NetworkNotificationRepository reads body['data'] as the list; AppNotification.fromApi reads:
    notes = body["data"]
    assert isinstance(notes, list) and unwrapped_is_whole(body)
    assert [(n["type"], n["title"], n["body"]) for n in notes] == [
        ("device.paired", "Shop phone paired", None),
        ("payment.review", "Check ORDER-7", "No balance"),
    ]
    assert all(isinstance(n["id"], int) for n in notes)
    assert all(datetime.fromisoformat(n["created_at"]).tzinfo is not None for n in notes)
    assert [n["payload"] for n in notes] == [{"scope": "device"}, {"scope": "brand"}]
    assert body["meta"] == {"unacknowledged": 2, "limit": 50}

    ack = client.post(
        f"{API}/notifications/acknowledgements",
        headers=headers,
        json={"ids": [n["id"] for n in notes]},
    )
    assert unwrapped(ack) == {"acknowledged": 2}
    assert client.get(f"{API}/notifications", headers=headers).get_json()["data"] == []


def unwrapped_is_whole(body):
    """A list under `data` is not unwrapped: the app's callers get the whole body."""
    return not isinstance(body.get("data"), dict)


def test_a_wrong_pairing_code_shows_its_own_message(client, brand):
    code = create_pairing_code(brand)

    refused = app_pairing(client, f"{(int(code) + 1) % 1_000_000:06d}", app_device_id())

    assert refused.status_code == 422
    body = refused.get_json()
    assert shown_message(refused) == REFUSED == body["error"] == body["message"]
    assert body["code"] == "INVALID_PAIRING_CODE"
    assert body["errors"][0]["field"] == "pairing_code"


@pytest.mark.parametrize(
    "code, status, error_code",
    [("12345", 422, "VALIDATION_ERROR"), ("abcdef", 422, "VALIDATION_ERROR")],
)
def test_a_malformed_pairing_code_shows_a_message_and_names_the_field(
    client, brand, code, status, error_code
):
    refused = app_pairing(client, code, app_device_id())

    assert refused.status_code == status
    body = refused.get_json()
    assert shown_message(refused) == body["message"] != GENERIC
    assert body["code"] == error_code
    assert [e["field"] for e in body["errors"]] == ["pairing_code"]
    assert db.session.execute(db.select(Device)).first() is None


def test_unpairing_another_phone_shows_not_found(client, brand):
    other, _, _ = paired_device(brand)
    _, tokens, _ = paired_device(brand)

    refused = client.delete(f"{API}/devices/{other.uuid}", headers=bearer(tokens["access_token"]))

    assert refused.status_code == 404
    assert shown_message(refused) == refused.get_json()["message"] != GENERIC
    assert refused.get_json()["code"] == "DEVICE_NOT_FOUND"


def test_an_unknown_route_and_a_body_that_is_not_json_show_their_messages(client, brand):
    _, tokens, _ = paired_device(brand)
    missing = client.get(f"{API}/nowhere", headers=bearer(tokens["access_token"]))
    not_json = client.post(
        f"{API}/devices", data="pairing_code=1", content_type="application/x-www-form-urlencoded"
    )

    for response, status, code in ((missing, 404, "NOT_FOUND"), (not_json, 415, None)):
        body = response.get_json()
        assert response.status_code == status
        assert shown_message(response) == body["message"] != GENERIC
        assert code is None or body["code"] == code


def test_too_many_pairing_attempts_show_slow_down(app):
    with rate_limited(app) as limited:
        client = limited.test_client()
        answers = [app_pairing(client, "000000", app_device_id()) for _ in range(11)]

    assert [a.status_code for a in answers] == [422] * 10 + [429]
    assert shown_message(answers[-1]) == "Too many requests; slow down."
    assert answers[-1].get_json()["code"] == "RATE_LIMITED"


def test_the_merchant_api_keeps_error_true(client):
    body = client.get("/api/v1/payments").get_json()

    assert (body["success"], body["error"], body["code"]) == (False, True, "MISSING_TOKEN")
