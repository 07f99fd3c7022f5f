"""The phone as an SMS sender: leasing queued messages and reporting what became of them."""

from datetime import timedelta

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.outbound import queue_sms
from tests.factories import paired_device

QUEUE = "/api/mobile/v1/sms/queues"


def phone_headers(brand):
    _, tokens, _ = paired_device(brand)
    return {"Authorization": f"Bearer {tokens['access_token']}"}


def queued(brand, count=1):
    messages = [queue_sms(brand, f"+88017000000{i:02d}", f"Receipt {i}") for i in range(count)]
    db.session.commit()
    return messages


def message(row_id):
    db.session.expire_all()
    return db.session.get(OutboundSms, row_id)


def test_phone_leases_queued_messages_once(client, brand):
    [first, second] = queued(brand, 2)
    headers = phone_headers(brand)

    leased = client.get(QUEUE, headers=headers).get_json()["data"]["messages"]

    assert [(m["id"], m["to"], m["body"]) for m in leased] == [
        (first.id, "+8801700000000", "Receipt 0"),
        (second.id, "+8801700000001", "Receipt 1"),
    ]
    assert client.get(QUEUE, headers=phone_headers(brand)).get_json()["data"]["messages"] == []
    assert message(first.id).shown_status == "leased"


def test_lease_honours_the_limit(client, brand):
    queued(brand, 3)

    leased = client.get(f"{QUEUE}?limit=2", headers=phone_headers(brand)).get_json()["data"][
        "messages"
    ]

    assert len(leased) == 2


@pytest.mark.parametrize("limit", ["0", "51", "many"])
def test_bad_lease_limit_names_the_field(client, brand, limit):
    response = client.get(f"{QUEUE}?limit={limit}", headers=phone_headers(brand))

    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == ["limit"]


def test_reported_sent_message_is_done(client, brand):
    [row] = queued(brand)
    headers = phone_headers(brand)
    client.get(QUEUE, headers=headers)

    response = client.post(f"{QUEUE}/{row.id}/results", headers=headers, json={"status": "sent"})

    assert response.status_code == 200
    assert response.get_json()["data"]["status"] == "sent"
    assert message(row.id).sent_at is not None
    again = client.post(f"{QUEUE}/{row.id}/results", headers=headers, json={"status": "sent"})
    assert (again.status_code, again.get_json()["code"]) == (409, "INVALID_STATE")


def test_reported_failure_is_queued_again_with_backoff(client, brand):
    [row] = queued(brand)
    headers = phone_headers(brand)
    client.get(QUEUE, headers=headers)

    data = client.post(
        f"{QUEUE}/{row.id}/results",
        headers=headers,
        json={"status": "failed", "error": "No signal"},
    ).get_json()["data"]

    assert (data["status"], data["attempts"]) == ("queued", 1)
    assert data["next_attempt_at"] is not None
    assert message(row.id).last_error == "No signal"
    assert client.get(QUEUE, headers=headers).get_json()["data"]["messages"] == []


def test_another_phone_cannot_report_a_lease_it_does_not_hold(client, brand):
    [row] = queued(brand)
    client.get(QUEUE, headers=phone_headers(brand))

    response = client.post(
        f"{QUEUE}/{row.id}/results", headers=phone_headers(brand), json={"status": "sent"}
    )

    assert response.status_code == 409
    assert message(row.id).shown_status == "leased"


def test_unreported_lease_returns_to_the_queue_after_five_minutes(client, brand):
    with freeze_time(utcnow()) as frozen:
        [row] = queued(brand)
        client.get(QUEUE, headers=phone_headers(brand))
        frozen.tick(timedelta(minutes=5, seconds=1))

        leased = client.get(QUEUE, headers=phone_headers(brand)).get_json()["data"]["messages"]

    assert [m["id"] for m in leased] == [row.id]


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "status"),
        ({"status": "delivered"}, "status"),
        ({"status": "failed", "error": "x" * 501}, "error"),
    ],
)
def test_bad_report_names_the_field(client, brand, body, field):
    [row] = queued(brand)
    headers = phone_headers(brand)
    client.get(QUEUE, headers=headers)

    response = client.post(f"{QUEUE}/{row.id}/results", headers=headers, json=body)

    assert response.status_code == 422
    assert [e["field"] for e in response.get_json()["errors"]] == [field]


def test_report_of_another_brands_message_is_not_found(client, brand, other_brand):
    [row] = queued(other_brand)

    response = client.post(
        f"{QUEUE}/{row.id}/results", headers=phone_headers(brand), json={"status": "sent"}
    )

    assert (response.status_code, response.get_json()["code"]) == (404, "OUTBOUND_SMS_NOT_FOUND")


def test_the_phone_sends_and_reports_a_test_text_like_a_live_one(client, brand):
    # A test key's or a test invoice's text is one someone asked for: docs/test-mode.md sends it.
    test = queue_sms(brand, "+8801700000009", "Test text", livemode=False)
    db.session.commit()
    headers = phone_headers(brand)

    [leased] = client.get(QUEUE, headers=headers).get_json()["data"]["messages"]
    assert leased["id"] == test.id
    response = client.post(f"{QUEUE}/{test.id}/results", headers=headers, json={"status": "sent"})

    assert response.status_code == 200, response.get_json()
    assert (message(test.id).shown_status, message(test.id).livemode) == ("sent", False)
