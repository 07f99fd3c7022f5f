"""The companion app forwarding SMS over HTTP: encryption, per-message results, batch limits, rules,
heartbeats.
"""

import base64
import json
from decimal import Decimal

import pytest

from gateway.devices.crypto import new_aes_key
from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import PaymentFactory, bkash_text, paired_device, sms_message

SMS = "/api/mobile/v1/sms"
TRX = "8N7A6B5C4D"


@pytest.fixture
def phone(brand):
    """A paired device of `brand`: (device, headers, aes_key)."""
    device, tokens, aes_key = paired_device(brand)
    return device, {"Authorization": f"Bearer {tokens['access_token']}"}, aes_key


def stored():
    return db.session.execute(db.select(InboundSms).order_by(InboundSms.id)).scalars().all()


def flip_byte(payload, index):
    raw = bytearray(base64.b64decode(payload))
    raw[index] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def test_batch_answers_each_message_in_order(client, brand, phone):
    device, headers, aes_key = phone
    text = bkash_text("500.00", TRX)
    tampered = sms_message(aes_key, bkash_text("600.00", "AAAA1111"), local_id="c")
    tampered["encrypted_payload"] = flip_byte(tampered["encrypted_payload"], 20)
    messages = [
        sms_message(aes_key, text, local_id="a"),
        sms_message(aes_key, text, local_id="b"),
        tampered,
    ]

    response = client.post(SMS, json={"messages": messages}, headers=headers)

    assert response.status_code == 200
    data = response.get_json()["data"]
    [row] = stored()
    assert [(r["local_id"], r["status"], r["server_ref"]) for r in data["results"]] == [
        ("a", "accepted", row.public_id),
        ("b", "duplicate", row.public_id),
        ("c", "rejected", None),
    ]
    assert (data["accepted"], data["duplicate"], data["rejected"]) == (1, 1, 1)
    assert (row.local_id, row.sender, row.body, row.device_id) == ("a", "bKash", text, device.id)
    assert (row.provider, row.amount, row.provider_trx_id, row.counterparty) == (
        "bkash",
        Decimal("500.00"),
        TRX,
        "01712345678",
    )


@pytest.mark.parametrize("where", [0, 15, -1], ids=["iv", "ciphertext", "tag"])
def test_tampered_payload_is_rejected_and_not_stored(client, brand, phone, where):
    _, headers, aes_key = phone
    message = sms_message(aes_key, bkash_text())
    message["encrypted_payload"] = flip_byte(message["encrypted_payload"], where)

    result = client.post(SMS, json={"messages": [message]}, headers=headers).get_json()["data"][
        "results"
    ][0]

    assert result["status"] == "rejected"
    assert "authentication" in result["reason"]
    assert stored() == []


def test_payload_sealed_under_another_key_is_rejected(client, brand, phone):
    _, headers, _ = phone
    message = sms_message(new_aes_key(), bkash_text())

    result = client.post(SMS, json={"messages": [message]}, headers=headers).get_json()["data"][
        "results"
    ][0]

    assert result["status"] == "rejected"
    assert stored() == []


def test_another_devices_key_does_not_open_this_devices_payloads(client, brand, phone):
    _, headers, _ = phone
    _, _, other_key = paired_device(brand)

    result = client.post(
        SMS, json={"messages": [sms_message(other_key, bkash_text())]}, headers=headers
    ).get_json()["data"]["results"][0]

    assert result["status"] == "rejected"


@pytest.mark.parametrize("payload", ["not base64 at all!", base64.b64encode(b"short").decode()])
def test_payload_that_is_not_an_aes_gcm_envelope_is_rejected(client, brand, phone, payload):
    _, headers, aes_key = phone
    message = {**sms_message(aes_key, "x"), "encrypted_payload": payload}

    result = client.post(SMS, json={"messages": [message]}, headers=headers).get_json()["data"][
        "results"
    ][0]

    assert result["status"] == "rejected"


def test_oversize_batch_is_refused_whole(client, brand, phone):
    _, headers, aes_key = phone
    message = sms_message(aes_key, bkash_text())

    response = client.post(SMS, json={"messages": [message] * 201}, headers=headers)

    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == ["messages"]
    assert stored() == []


def test_batch_of_two_hundred_is_accepted(client, brand, phone):
    _, headers, aes_key = phone
    messages = [sms_message(aes_key, bkash_text("10.00", f"TRX{i:07d}")) for i in range(200)]

    data = client.post(SMS, json={"messages": messages}, headers=headers).get_json()["data"]

    assert data["accepted"] == 200
    assert len(stored()) == 200


@pytest.mark.parametrize("body", [{}, {"messages": []}, {"messages": "x"}, []])
def test_batch_without_messages_is_refused(client, brand, phone, body):
    _, headers, _ = phone

    response = client.post(SMS, json=body, headers=headers)

    assert response.status_code == 422
    assert response.get_json()["code"] == "VALIDATION_ERROR"


def test_malformed_message_is_rejected_alone(client, brand, phone):
    _, headers, aes_key = phone
    good = sms_message(aes_key, bkash_text(), local_id="good")
    no_sender = {
        k: v for k, v in sms_message(aes_key, "x", local_id="bad").items() if k != "sender"
    }
    bad_time = sms_message(aes_key, "y", local_id="late", received_at="yesterday")

    results = client.post(
        SMS, json={"messages": [good, no_sender, bad_time, "junk"]}, headers=headers
    ).get_json()["data"]["results"]

    assert [(r["local_id"], r["status"]) for r in results] == [
        ("good", "accepted"),
        ("bad", "rejected"),
        ("late", "rejected"),
        (None, "rejected"),
    ]
    assert "sender" in results[1]["reason"]
    assert len(stored()) == 1


def test_received_at_may_be_epoch_milliseconds(client, brand, phone):
    _, headers, aes_key = phone
    message = sms_message(aes_key, bkash_text(), received_at=1735560000000)

    client.post(SMS, json={"messages": [message]}, headers=headers)

    assert stored()[0].received_at.isoformat() == "2024-12-30T12:00:00+00:00"


def test_payload_wrapped_as_json_is_read(client, brand, phone):
    _, headers, aes_key = phone
    message = sms_message(aes_key, json.dumps({"body": bkash_text("500.00", TRX), "sim": 1}))

    client.post(SMS, json={"messages": [message]}, headers=headers)

    assert stored()[0].provider_trx_id == TRX


def test_forwarded_sms_completes_a_claimed_payment(client, brand, phone):
    _, headers, aes_key = phone
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)

    client.post(
        SMS, json={"messages": [sms_message(aes_key, bkash_text("500.00", TRX))]}, headers=headers
    )

    db.session.expire_all()
    assert stored()[0].status == "matched"
    assert db.session.get(type(payment), payment.id).status == "completed"


def test_sms_needs_a_device_token(client, brand):
    response = client.post(SMS, json={"messages": []})

    assert response.status_code == 401
    assert response.get_json()["code"] == "MISSING_TOKEN"


def test_filter_rules_list_the_provider_senders(client, brand, phone):
    _, headers, _ = phone

    data = client.get("/api/mobile/v1/config/filter-rules", headers=headers).get_json()["data"]

    assert {"bKash", "NAGAD", "16216", "upay"} <= set(data["allowed_senders"])
    assert "TrxID" in data["positive_keywords"] and "OTP" in data["negative_keywords"]
    assert isinstance(data["version"], int) and data["check_interval_hours"] > 0


def test_heartbeat_records_the_phones_state(client, brand, phone):
    device, headers, _ = phone

    response = client.post(
        "/api/mobile/v1/devices/heartbeats",
        headers=headers,
        json={"battery_level": 81, "is_charging": True, "network": "wifi", "app_version": "2.4.0"},
    )

    assert response.status_code == 200
    data = response.get_json()["data"]
    assert data["next_heartbeat_seconds"] > 0 and data["pending_notifications"] == 1
    device = db.session.get(Device, device.id)
    db.session.refresh(device)
    assert device.last_heartbeat_at is not None
    assert (device.status_json["battery_level"], device.app_version) == (81, "2.4.0")


@pytest.mark.parametrize(
    "body, field",
    [({"battery_level": 150}, "battery_level"), ({"is_charging": "maybe"}, "is_charging")],
)
def test_heartbeat_with_bad_fields_names_them(client, brand, phone, body, field):
    _, headers, _ = phone

    response = client.post("/api/mobile/v1/devices/heartbeats", headers=headers, json=body)

    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]


def test_dashboard_counts_todays_texts_and_completions(client, brand, phone):
    _, headers, aes_key = phone
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)
    messages = [
        sms_message(aes_key, bkash_text("500.00", TRX)),
        sms_message(aes_key, "Hello there", sender="01812345678"),
    ]
    client.post(SMS, json={"messages": messages}, headers=headers)

    data = client.get("/api/mobile/v1/dashboard", headers=headers).get_json()["data"]

    assert data["sms_today"]["received"] == 2
    assert (data["sms_today"]["matched"], data["sms_today"]["unparsed"]) == (1, 1)
    assert data["payments"] == {
        "awaiting_sms": 0,
        "completed_today": 1,
        "completed_today_amount": "500.00",
    }
