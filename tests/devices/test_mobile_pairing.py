"""The companion app's pairing and tokens: one-time codes, rotation, reuse detection, token
types."""

import json
import re
from datetime import timedelta

import jwt
import pytest
from freezegun import freeze_time

from gateway import create_app
from gateway.clock import utcnow
from gateway.devices.crypto import open_device_key
from gateway.devices.models.device import Device, PairingCode
from gateway.devices.models.notification import Notification, NotificationAcknowledgement
from gateway.devices.pairing import create_pairing_code, pairing_qr_payload, pairing_qr_svg
from gateway.devices.tokens import rotate_tokens
from gateway.domain_errors import DomainError
from gateway.extensions import db
from tests.factories import paired_device
from tests.limited_apps import limited_app as rate_limited

PAIR = "/api/mobile/v1/devices"
REFRESH = "/api/mobile/v1/devices/token-refreshes"
DASHBOARD = "/api/mobile/v1/dashboard"


def pair(client, code, device_id="phone-1", **extra):
    body = {
        "pairing_code": code,
        "device_id": device_id,
        "device_name": "Counter phone",
        "app_version": "2.3.0",
        "platform": "android",
        "fingerprint": "install-1",
        **extra,
    }
    return client.post(PAIR, json=body)


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def test_pairing_with_a_fresh_code_returns_tokens_and_the_device_key(client, brand):
    response = pair(client, create_pairing_code(brand))

    assert response.status_code == 201
    data = response.get_json()["data"]
    assert re.fullmatch(r"[0-9a-f]{64}", data["aes_key"])
    assert data["expires_in"] == 900
    device = db.session.execute(db.select(Device)).scalar_one()
    assert (device.uuid, device.brand_id, device.name, device.platform) == (
        data["device_uuid"],
        brand.id,
        "Counter phone",
        "android",
    )
    # The key is kept sealed at rest, never in clear.
    assert data["aes_key"] not in device.aes_key_sealed
    assert open_device_key(device.aes_key_sealed, device.uuid) == data["aes_key"]
    assert client.get(DASHBOARD, headers=bearer(data["access_token"])).status_code == 200


def test_pairing_code_works_only_once(client, brand):
    code = create_pairing_code(brand)
    assert pair(client, code).status_code == 201

    response = pair(client, code, device_id="phone-2")

    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "INVALID_PAIRING_CODE"
    assert body["errors"][0]["field"] == "pairing_code"
    assert db.session.execute(db.select(db.func.count()).select_from(Device)).scalar_one() == 1


def test_expired_pairing_code_is_refused(client, brand):
    with freeze_time(utcnow()) as frozen:
        code = create_pairing_code(brand)
        frozen.tick(timedelta(minutes=5, seconds=1))

        response = pair(client, code)

    assert response.status_code == 422
    assert response.get_json()["code"] == "INVALID_PAIRING_CODE"
    assert db.session.execute(db.select(Device)).first() is None


def test_wrong_pairing_code_is_refused(client, brand):
    code = create_pairing_code(brand)
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"

    response = pair(client, wrong)

    assert response.status_code == 422
    assert response.get_json()["code"] == "INVALID_PAIRING_CODE"
    assert db.session.execute(db.select(PairingCode.used_at)).scalar_one() is None


@pytest.mark.parametrize("code", ["12345", "1234567", "abcdef", "", 123456, None])
def test_malformed_pairing_code_names_the_field(client, brand, code):
    response = pair(client, code)

    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "VALIDATION_ERROR"
    assert [e["field"] for e in body["errors"]] == ["pairing_code"]


def test_pairing_requires_device_id_and_name(client, brand):
    response = client.post(PAIR, json={"pairing_code": create_pairing_code(brand)})

    assert response.status_code == 422
    assert {e["field"] for e in response.get_json()["errors"]} == {"device_id", "device_name"}


def test_pairing_body_must_be_json(client, brand):
    response = client.post(
        PAIR, data="pairing_code=123456", content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 415
    assert response.get_json()["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_pairing_the_same_phone_again_unpairs_its_old_pairing(client, brand):
    first = pair(client, create_pairing_code(brand), device_id="phone-1").get_json()["data"]
    second = pair(client, create_pairing_code(brand), device_id="phone-1").get_json()["data"]

    assert (
        client.get(DASHBOARD, headers=bearer(first["access_token"])).get_json()["code"]
        == "DEVICE_REVOKED"
    )
    assert client.get(DASHBOARD, headers=bearer(second["access_token"])).status_code == 200


def test_pairing_welcomes_the_device_with_a_notification(client, brand):
    data = pair(client, create_pairing_code(brand)).get_json()["data"]

    notes = client.get(
        "/api/mobile/v1/notifications", headers=bearer(data["access_token"])
    ).get_json()["data"]
    assert [n["type"] for n in notes] == ["device.paired"]


def test_pair_code_command_prints_a_code_that_pairs(runner, client, brand):
    result = runner.invoke(args=["gateway", "pair-code", "--qr"])

    assert result.exit_code == 0, result.output
    code = result.output.strip().splitlines()[-1]
    assert re.fullmatch(r"\d{6}", code)
    assert pair(client, code).status_code == 201


def test_pairing_qr_code_carries_server_url_and_code(app, brand):
    code = create_pairing_code(brand)

    assert json.loads(pairing_qr_payload(code)) == {
        "server_url": app.config["BASE_URL"],
        "otp": code,
    }
    assert pairing_qr_svg(code).startswith("<svg")


def test_refresh_rotates_both_tokens(client, brand):
    device, tokens, _ = paired_device(brand)
    pinned = device.device_id  # paired without a fingerprint: its device_id is pinned

    response = client.post(
        REFRESH, json={"refresh_token": tokens["refresh_token"], "fingerprint": pinned}
    )

    assert response.status_code == 200
    fresh = response.get_json()["data"]
    assert fresh["access_token"] != tokens["access_token"]
    assert fresh["refresh_token"] != tokens["refresh_token"]
    assert client.get(DASHBOARD, headers=bearer(fresh["access_token"])).status_code == 200
    again = client.post(
        REFRESH, json={"refresh_token": fresh["refresh_token"], "fingerprint": pinned}
    )
    assert again.status_code == 200


def test_reused_refresh_token_revokes_the_device(client, brand):
    device, tokens, _ = paired_device(brand)
    pinned = {"fingerprint": device.device_id}
    fresh = client.post(
        REFRESH, json={"refresh_token": tokens["refresh_token"], **pinned}
    ).get_json()["data"]

    reuse = client.post(REFRESH, json={"refresh_token": tokens["refresh_token"], **pinned})

    assert reuse.status_code == 401
    assert reuse.get_json()["code"] == "REFRESH_TOKEN_REUSED"
    db.session.refresh(device)
    assert device.revoked_at is not None
    # Everything the thief or the owner holds stops working: the newest pair included.
    assert (
        client.get(DASHBOARD, headers=bearer(fresh["access_token"])).get_json()["code"]
        == "DEVICE_REVOKED"
    )
    assert (
        client.post(REFRESH, json={"refresh_token": fresh["refresh_token"], **pinned}).status_code
        == 401
    )


def test_one_refresh_token_presented_twice_rotates_once(app, brand):
    device, tokens, _ = paired_device(brand)
    rotate_tokens(tokens["refresh_token"], device.device_id)

    with pytest.raises(DomainError) as error:
        rotate_tokens(tokens["refresh_token"], device.device_id)

    assert error.value.code == "REFRESH_TOKEN_REUSED"


def test_another_fingerprint_is_refused_without_revoking(client, brand):
    device, tokens, _ = paired_device(brand)
    fresh = client.post(
        REFRESH, json={"refresh_token": tokens["refresh_token"], "fingerprint": device.device_id}
    ).get_json()["data"]

    response = client.post(
        REFRESH, json={"refresh_token": fresh["refresh_token"], "fingerprint": "fp-other"}
    )

    assert response.status_code == 401
    assert response.get_json()["code"] == "FINGERPRINT_MISMATCH"
    assert (
        client.post(
            REFRESH, json={"refresh_token": fresh["refresh_token"], "fingerprint": device.device_id}
        ).status_code
        == 200
    )


def test_access_token_is_not_accepted_as_refresh_token(client, brand):
    _, tokens, _ = paired_device(brand)

    response = client.post(REFRESH, json={"refresh_token": tokens["access_token"]})

    assert response.status_code == 401
    assert response.get_json()["code"] == "INVALID_TOKEN"


def test_refresh_token_is_not_accepted_as_access_token(client, brand):
    _, tokens, _ = paired_device(brand)

    response = client.get(DASHBOARD, headers=bearer(tokens["refresh_token"]))

    assert response.status_code == 401
    assert response.get_json()["code"] == "INVALID_TOKEN"


def test_access_token_expires_after_fifteen_minutes(client, brand):
    with freeze_time(utcnow()) as frozen:
        _, tokens, _ = paired_device(brand)
        frozen.tick(timedelta(minutes=14))
        assert client.get(DASHBOARD, headers=bearer(tokens["access_token"])).status_code == 200
        frozen.tick(timedelta(minutes=2))

        response = client.get(DASHBOARD, headers=bearer(tokens["access_token"]))

    assert response.status_code == 401
    assert response.get_json()["code"] == "TOKEN_EXPIRED"


@pytest.mark.parametrize(
    "header, code",
    [
        (None, "MISSING_TOKEN"),
        ("Bearer ", "INVALID_TOKEN"),
        ("Bearer not-a-jwt", "INVALID_TOKEN"),
        ("Basic dXNlcjpwYXNz", "INVALID_TOKEN"),
    ],
)
def test_requests_without_a_valid_access_token_are_refused(client, brand, header, code):
    response = client.get(DASHBOARD, headers={"Authorization": header} if header else {})

    assert response.status_code == 401
    assert response.get_json()["code"] == code


def test_token_signed_with_another_key_is_refused(client, brand):
    device, tokens, _ = paired_device(brand)
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    forged = jwt.encode(claims, "x" * 32, algorithm="HS256")

    response = client.get(DASHBOARD, headers=bearer(forged))

    assert response.status_code == 401
    assert response.get_json()["code"] == "INVALID_TOKEN"


def test_device_can_unpair_itself(client, brand):
    device, tokens, _ = paired_device(brand)

    response = client.delete("/api/mobile/v1/devices/self", headers=bearer(tokens["access_token"]))

    assert response.status_code == 200
    assert response.get_json()["data"] == {"id": device.uuid, "deleted": True}
    assert (
        client.get(DASHBOARD, headers=bearer(tokens["access_token"])).get_json()["code"]
        == "DEVICE_REVOKED"
    )


def test_device_cannot_unpair_another_device(client, brand):
    other, _, _ = paired_device(brand)
    _, tokens, _ = paired_device(brand)

    response = client.delete(
        f"/api/mobile/v1/devices/{other.uuid}", headers=bearer(tokens["access_token"])
    )

    assert response.status_code == 404
    assert response.get_json()["code"] == "DEVICE_NOT_FOUND"
    db.session.refresh(other)
    assert other.revoked_at is None


def test_notifications_are_listed_and_acknowledged(client, brand, other_brand):
    device, tokens, _ = paired_device(brand)
    mine = Notification(brand_id=brand.id, kind="payment.review", title="Check payment")
    theirs = Notification(brand_id=other_brand.id, kind="payment.review", title="Not yours")
    db.session.add_all([mine, theirs])
    db.session.commit()
    headers = bearer(tokens["access_token"])

    listed = client.get("/api/mobile/v1/notifications", headers=headers).get_json()["data"]
    assert {n["title"] for n in listed} == {"Shop phone paired", "Check payment"}

    ack = client.post(
        "/api/mobile/v1/notifications/acknowledgements",
        headers=headers,
        json={"ids": [n["id"] for n in listed] + [theirs.id]},
    )

    assert ack.get_json()["data"] == {"acknowledged": 2}
    assert client.get("/api/mobile/v1/notifications", headers=headers).get_json()["data"] == []
    acknowledged = db.select(NotificationAcknowledgement.notification_id)
    assert set(db.session.execute(acknowledged).scalars()) == {n["id"] for n in listed}


@pytest.mark.parametrize("bad", [2**31, 2744979227600093062, 0, -1])
def test_an_acknowledged_id_no_notification_can_have_is_a_422_on_it(client, brand, bad):
    """PostgreSQL cannot even compare an id past its integer column: refused on the field, not a
    500.
    """
    _, tokens, _ = paired_device(brand)

    ack = client.post(
        "/api/mobile/v1/notifications/acknowledgements",
        headers=bearer(tokens["access_token"]),
        json={"ids": [1, bad]},
    )

    assert ack.status_code == 422
    assert [error["field"] for error in ack.get_json()["errors"]] == ["ids.1"]


@pytest.fixture
def limited_app(app):
    """The same database behind an app with rate limits on."""
    with rate_limited(app) as limited:
        yield limited


def test_pairing_attempts_are_rate_limited_per_address(limited_app):
    """Ten guesses a minute from one address, then 429."""
    client = limited_app.test_client()
    body = {"pairing_code": "000000", "device_id": "x", "device_name": "y"}
    codes = [client.post(PAIR, json=body).status_code for _ in range(11)]
    last = client.post(PAIR, json=body)
    code, retry_after = last.get_json()["code"], last.headers["Retry-After"]

    assert codes == [422] * 10 + [429]
    assert code == "RATE_LIMITED" and int(retry_after) > 0


def test_pair_code_command_names_the_brands_own_address(runner, brand):
    brand.base_url = "https://pay.shop.example"
    db.session.commit()

    result = runner.invoke(args=["gateway", "pair-code"])

    assert result.exit_code == 0, result.output
    assert "Pairing code for https://pay.shop.example " in result.output


def test_a_refresh_without_the_pinned_fingerprint_is_refused_and_rotates_nothing(client, brand):
    device, tokens, _ = paired_device(brand)
    # A device paired before pairing pinned one: the first fingerprint it presents is pinned.
    device.fingerprint = None
    db.session.commit()
    fresh = client.post(
        REFRESH, json={"refresh_token": tokens["refresh_token"], "fingerprint": "fp-1"}
    ).get_json()["data"]
    db.session.refresh(device)
    pinned_hash = device.refresh_token_hash

    # A stolen refresh token alone, with no fingerprint at all (or a null one), is refused like a
    # wrong one.
    for body in (
        {"refresh_token": fresh["refresh_token"]},
        {"refresh_token": fresh["refresh_token"], "fingerprint": None},
    ):
        response = client.post(REFRESH, json=body)
        assert response.status_code == 401
        assert response.get_json()["code"] == "FINGERPRINT_MISMATCH"
    with pytest.raises(DomainError) as refused:
        rotate_tokens(fresh["refresh_token"])
    assert refused.value.code == "FINGERPRINT_MISMATCH"

    db.session.expire_all()
    device = db.session.get(Device, device.id)
    assert (device.refresh_token_hash, device.fingerprint, device.revoked_at) == (
        pinned_hash,
        "fp-1",
        None,
    )
    assert (
        client.post(
            REFRESH, json={"refresh_token": fresh["refresh_token"], "fingerprint": "fp-1"}
        ).status_code
        == 200
    )


def test_a_fingerprint_given_at_pairing_is_pinned_from_the_start(client, brand):
    response = pair(client, create_pairing_code(brand), fingerprint="fp-paired")
    assert response.status_code == 201
    tokens = response.get_json()["data"]
    device = db.session.execute(db.select(Device)).scalar_one()
    assert device.fingerprint == "fp-paired"

    for body in (
        {"refresh_token": tokens["refresh_token"]},
        {"refresh_token": tokens["refresh_token"], "fingerprint": "fp-other"},
    ):
        refused = client.post(REFRESH, json=body)
        assert refused.status_code == 401 and refused.get_json()["code"] == "FINGERPRINT_MISMATCH"
    db.session.expire_all()
    assert db.session.get(Device, device.id).revoked_at is None

    accepted = client.post(
        REFRESH, json={"refresh_token": tokens["refresh_token"], "fingerprint": "fp-paired"}
    )
    assert accepted.status_code == 200


@pytest.mark.parametrize("fingerprint", ["", "x" * 129])
def test_a_malformed_fingerprint_is_refused_and_uses_no_code(client, brand, fingerprint):
    code = create_pairing_code(brand)
    response = pair(client, code, fingerprint=fingerprint)
    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == ["fingerprint"]
    assert db.session.execute(db.select(Device)).first() is None
    assert pair(client, code).status_code == 201


@pytest.mark.parametrize("fingerprint", [None, "absent"])
def test_pairing_without_a_fingerprint_pins_the_device_id(client, brand, fingerprint):
    body = {"pairing_code": create_pairing_code(brand), "device_id": "phone-1", "device_name": "P"}
    if fingerprint != "absent":
        body["fingerprint"] = fingerprint
    tokens = client.post(PAIR, json=body).get_json()["data"]
    assert db.session.execute(db.select(Device.fingerprint)).scalar_one() == "phone-1"

    for refused in ({}, {"fingerprint": "phone-2"}):
        answer = client.post(REFRESH, json={"refresh_token": tokens["refresh_token"], **refused})
        assert answer.status_code == 401 and answer.get_json()["code"] == "FINGERPRINT_MISMATCH"
    accepted = client.post(
        REFRESH, json={"refresh_token": tokens["refresh_token"], "fingerprint": "phone-1"}
    )
    assert accepted.status_code == 200


def test_a_wrong_used_or_expired_code_gets_one_and_the_same_answer(client, brand):
    used = create_pairing_code(brand)
    assert pair(client, used).status_code == 201
    with freeze_time(utcnow()) as frozen:
        expired = create_pairing_code(brand)
        frozen.tick(timedelta(minutes=6))
        answers = [
            pair(client, code, device_id="phone-2").get_json()
            for code in (used, expired, f"{(int(used) + 1) % 1_000_000:06d}")
        ]
    for answer in answers:
        answer.pop("request_id", None)
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["code"] == "INVALID_PAIRING_CODE"
    assert answers[0]["errors"][0]["field"] == "pairing_code"


def wrong_codes(code, count):
    """`count` six-digit codes other than `code`."""
    return [f"{(int(code) + step) % 1_000_000:06d}" for step in range(1, count + 1)]


def test_a_code_dies_after_five_wrong_guesses_at_any_brand(client, brand, other_brand):
    ours, theirs = create_pairing_code(brand), create_pairing_code(other_brand)
    guesses = [c for c in wrong_codes(ours, 7) if c != theirs][:5]
    for guess in guesses:
        assert pair(client, guess).get_json()["code"] == "INVALID_PAIRING_CODE"
    # Each wrong guess counted against every live code: both brands' codes are used up.
    for code in (ours, theirs):
        refused = pair(client, code)
        assert refused.status_code == 422
        assert refused.get_json()["code"] == "INVALID_PAIRING_CODE"
    assert db.session.execute(db.select(Device)).first() is None
    # A new code starts with a full budget.
    assert pair(client, create_pairing_code(brand)).status_code == 201


def test_four_wrong_guesses_leave_the_code_working(client, brand):
    code = create_pairing_code(brand)
    for guess in wrong_codes(code, 4):
        pair(client, guess)
    assert pair(client, code).status_code == 201
    # A code made after the guesses is not charged for them.
    assert db.session.execute(db.select(PairingCode.failed_guesses)).scalar_one() == 4
