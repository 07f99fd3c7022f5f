"""The companion app's bad items are rejected alone: a decrypted text no column can take, or a
received_at no brand's zone can print; the batch's good items are stored, nothing half-written,
and the phone's retry of the same batch neither fails nor leaves a text stuck."""

import json
from datetime import timedelta

import pytest

from gateway.clock import isoformat, utcnow
from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import bkash_text, sms_message
from tests.sms.test_mobile_sms import phone, stored  # noqa: F401 - a fixture and a helper

SMS = "/api/mobile/v1/sms"
HEARTBEATS = "/api/mobile/v1/devices/heartbeats"
# Each end of the calendar, in the forms the audit found: a zone that overflows the conversion to
# UTC, and a UTC moment that overflows the brand's zone once stored (ISO 8601 and epoch ms).
EDGE_TIMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59Z",
    253402300799999,
    "1969-12-31T23:59:59Z",
    "9000-01-01T00:00:00Z",
]


def post_batch(client, phone, messages):
    """POST one batch; the answer's (local_id, status) pairs and results."""
    _, headers, _ = phone
    response = client.post(SMS, json={"messages": messages}, headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    results = response.get_json()["data"]["results"]
    return [(r["local_id"], r["status"]) for r in results], results


@pytest.mark.parametrize(
    "plaintext",
    [
        "hello \x00 world",
        json.dumps({"body": "hello \u0000 world"}),
        json.dumps({"body": "hello \ud800 world"}),
        json.dumps({"text": "low \udc00 half", "receiver": "01712345678"}),
    ],
    ids=["nul", "json-nul", "json-surrogate", "json-low-surrogate"],
)
def test_a_decrypted_text_no_column_can_take_is_rejected_alone(client, brand, phone, plaintext):
    _, _, aes_key = phone
    good = sms_message(aes_key, bkash_text("500.00", "8N7A6B5C4D"), local_id="good")
    bad = sms_message(aes_key, plaintext, local_id="bad")

    pairs, results = post_batch(client, phone, [good, bad])

    assert pairs == [("good", "accepted"), ("bad", "rejected")]
    assert "encrypted_payload" in results[1]["reason"]
    [row] = stored()
    assert row.public_id == results[0]["server_ref"] and "\x00" not in row.body


@pytest.mark.parametrize("received_at", EDGE_TIMES, ids=str)
def test_a_received_at_no_zone_can_print_is_rejected_alone_on_every_retry(
    client, brand, phone, received_at
):
    _, _, aes_key = phone
    good_text = bkash_text("500.00", "8N7A6B5C4D", balance="1500.00")
    bad_text = bkash_text("300.00", "7M6L5K4J3H", balance="1800.00")

    answers = []
    for _ in range(3):  # the phone's retries, each encrypted afresh
        good = sms_message(aes_key, good_text, local_id="good")
        bad = sms_message(aes_key, bad_text, local_id="bad", received_at=received_at)
        answers.append(post_batch(client, phone, [good, bad]))

    assert [pairs for pairs, _ in answers] == [
        [("good", "accepted"), ("bad", "rejected")],
        [("good", "duplicate"), ("bad", "rejected")],
        [("good", "duplicate"), ("bad", "rejected")],
    ]
    assert answers[0][1][1]["reason"] == "invalid fields: received_at"
    [row] = stored()
    assert row.body == good_text and row.status != "review"


@pytest.mark.parametrize(
    "received_at",
    [
        lambda: "1970-01-01T00:00:00Z",
        lambda: 1,
        lambda: "2200-01-01T00:00:00Z",
        lambda: isoformat(utcnow() + timedelta(hours=23)),
    ],
    ids=["earliest", "a-phone-clock-reset-to-1970", "a-clock-far-ahead", "a-clock-a-day-ahead"],
)
def test_a_received_at_a_phone_s_wrong_clock_can_show_is_kept(client, brand, phone, received_at):
    _, _, aes_key = phone
    message = sms_message(aes_key, bkash_text(), local_id="m1", received_at=received_at())

    pairs, _ = post_batch(client, phone, [message])

    assert pairs == [("m1", "accepted")]
    assert len(stored()) == 1


@pytest.mark.parametrize("last_sms_at", EDGE_TIMES, ids=str)
def test_a_heartbeats_last_sms_at_no_zone_can_print_is_refused_by_name(
    client, brand, phone, last_sms_at
):
    device, headers, _ = phone

    response = client.post(
        HEARTBEATS, headers=headers, json={"battery_level": 50, "last_sms_at": last_sms_at}
    )

    assert response.status_code == 422, response.get_data(as_text=True)
    assert [e["field"] for e in response.get_json()["errors"]] == ["last_sms_at"]
    db.session.expire_all()
    assert db.session.get(Device, device.id).last_heartbeat_at is None


def test_a_decrypted_text_of_json_too_deep_to_read_is_kept_as_plain_text(client, brand, phone):
    """Such a text is no wrapping the gateway can read: it is kept as written, and never fails the
    batch it came in (the phone would resend that batch for ever)."""
    _, _, aes_key = phone
    nested = '{"a":' + "[" * 5000 + "]" * 5000 + "}"
    good = sms_message(aes_key, bkash_text("500.00", "8N7A6B5C4D"), local_id="good")
    deep = sms_message(aes_key, nested, local_id="deep")

    pairs, results = post_batch(client, phone, [good, deep])

    assert pairs == [("good", "accepted"), ("deep", "accepted")]
    kept = {row.public_id: row.body for row in stored()}
    assert (
        kept[results[1]["server_ref"]] == nested and "8N7A6B5C4D" in kept[results[0]["server_ref"]]
    )
