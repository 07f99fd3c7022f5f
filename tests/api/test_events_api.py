"""GET /events, GET /events/{id}, POST /events/{id}/redeliver: paged, filtered by type and time,
newest first, live and test apart, and replayed through real receivers."""

from datetime import timedelta

import pytest
from freezegun import freeze_time

from gateway.clock import isoformat, utcnow
from gateway.extensions import db
from gateway.payments.lifecycle import cancel_payment
from gateway.webhooks.models.event import Event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.endpoint_support import deliver_all, endpoint_receivers, test_auth  # noqa: F401
from tests.factories import PaymentFactory, completed_payment
from tests.webhook_support import receiver  # noqa: F401,F811 - fixture

START = utcnow().replace(microsecond=0) - timedelta(days=3)


def events_at(brand, kinds, livemode=True):
    """One payment event per kind, an hour apart from START, oldest first; their ids."""
    ids = []
    for hour, kind in enumerate(kinds):
        with freeze_time(START + timedelta(hours=hour)):
            if kind == "payment.completed":
                completed_payment(brand=brand, livemode=livemode)
            else:
                cancel_payment(PaymentFactory(brand=brand, livemode=livemode))
        ids.append(
            db.session.execute(
                db.select(Event.public_id).order_by(Event.id.desc()).limit(1)
            ).scalar_one()
        )
    return ids


def listed(client, headers, query=""):
    response = client.get(f"/api/v1/events{query}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_events_are_listed_newest_first_in_pages(client, auth, brand):
    ids = events_at(brand, ["payment.completed", "payment.cancelled"] * 3)

    first = listed(client, auth, "?per_page=4")
    second = listed(client, auth, "?per_page=4&page=2")

    assert [e["id"] for e in first["data"] + second["data"]] == ids[::-1]
    assert first["meta"] == {"page": 1, "per_page": 4, "total": 6, "total_pages": 2}
    newest = first["data"][0]
    assert list(newest) == ["id", "type", "created", "livemode", "data"]
    assert (newest["type"], newest["livemode"]) == ("payment.cancelled", True)
    assert newest["created"] == isoformat(START + timedelta(hours=5))
    assert newest["data"]["status"] == "cancelled"


def test_events_are_filtered_by_type_and_time(client, auth, brand):
    ids = events_at(brand, ["payment.completed", "payment.cancelled"] * 3)

    cancelled = listed(client, auth, "?type=payment.cancelled")["data"]
    assert [e["id"] for e in cancelled] == [ids[5], ids[3], ids[1]]
    window = (
        f"?from={isoformat(START + timedelta(hours=1))}&to={isoformat(START + timedelta(hours=3))}"
    )
    assert [e["id"] for e in listed(client, auth, window.replace("+", "%2B"))["data"]] == [
        ids[3],
        ids[2],
        ids[1],
    ]
    both = listed(
        client,
        auth,
        f"?type=payment.completed&from={isoformat(START + timedelta(hours=1))}".replace("+", "%2B"),
    )
    assert [e["id"] for e in both["data"]] == [ids[4], ids[2]]


@pytest.mark.parametrize(
    "query, field",
    [
        ("?type=payment.paid", "type"),
        ("?from=yesterday", "from"),
        ("?to=2026-13-01T00:00:00Z", "to"),
        ("?per_page=101", "per_page"),
        ("?page=0", "page"),
    ],
)
def test_bad_list_filters_name_their_field(client, auth, query, field):
    response = client.get(f"/api/v1/events{query}", headers=auth)
    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "VALIDATION_ERROR" and body["errors"][0]["field"] == field


def test_an_event_is_read_by_the_id_its_webhook_body_carried(client, auth, brand, receiver):
    payment = completed_payment(brand=brand, callback_url=receiver.url)
    deliver_all()
    [body] = receiver.events()

    response = client.get(f"/api/v1/events/{body['id']}", headers=auth)

    assert response.status_code == 200
    event = response.get_json()["data"]
    assert event["id"] == body["id"] and event["type"] == body["event"] == "payment.completed"
    assert event["created"] == body["created"] and event["livemode"] is body["livemode"] is True
    assert event["data"] == body["data"] and event["data"]["payment_id"] == payment.public_id


@pytest.mark.parametrize(
    "event_id", ["evt_000000000000000000000000", "nope", "1", "evt_" + "a" * 60, "%00"]
)
def test_unknown_event_ids_are_not_found(client, auth, event_id):
    for response in (
        client.get(f"/api/v1/events/{event_id}", headers=auth),
        client.post(f"/api/v1/events/{event_id}/redeliver", headers=auth),
    ):
        assert response.status_code == 404
        assert response.get_json()["code"] == "EVENT_NOT_FOUND"


def test_live_and_test_keys_never_see_each_others_events(
    client, auth, test_auth, brand, other_brand
):
    [live] = events_at(brand, ["payment.completed"])
    [test] = events_at(brand, ["payment.cancelled"], livemode=False)
    [foreign] = events_at(other_brand, ["payment.completed"])

    assert [e["id"] for e in listed(client, auth)["data"]] == [live]
    assert [e["id"] for e in listed(client, test_auth)["data"]] == [test]
    assert listed(client, test_auth)["data"][0]["livemode"] is False
    for headers, hidden in ((auth, test), (auth, foreign), (test_auth, live)):
        response = client.get(f"/api/v1/events/{hidden}", headers=headers)
        assert response.status_code == 404


def test_redelivery_goes_to_the_original_url_and_every_endpoint_choosing_it_now(
    client, auth, brand, receiver, endpoint_receivers
):
    chose, chose_receiver = endpoint_receivers(["payment.completed"])
    completed_payment(brand=brand, callback_url=receiver.url)
    deliver_all()
    event_id = receiver.events()[0]["id"]
    # Added after the event: it chooses it now, so a replay reaches it too.
    late, late_receiver = endpoint_receivers(["*"])
    _, other_receiver = endpoint_receivers(["refund.completed"])

    response = client.post(f"/api/v1/events/{event_id}/redeliver", headers=auth)

    assert response.status_code == 202
    records = response.get_json()["data"]
    assert sorted(r["url"] for r in records) == sorted(
        [receiver.url, chose_receiver.url, late_receiver.url]
    )
    deliver_all()
    assert [e["id"] for e in receiver.events()] == [event_id, event_id]
    assert [e["id"] for e in chose_receiver.events()] == [event_id, event_id]
    assert [e["id"] for e in late_receiver.events()] == [event_id]
    assert other_receiver.events() == []
    assert receiver.received[1]["raw"] == receiver.received[0]["raw"]
    new = db.session.execute(
        db.select(WebhookDelivery).where(WebhookDelivery.endpoint_id == late.id)
    ).scalar_one()
    assert (new.event_id, new.event) == (event_id, "payment.completed")


def test_redelivery_to_one_endpoint_reaches_it_alone(
    client, auth, brand, receiver, endpoint_receivers
):
    first, first_receiver = endpoint_receivers(["payment.completed"])
    second, second_receiver = endpoint_receivers(["payment.completed"])
    completed_payment(brand=brand, callback_url=receiver.url)
    deliver_all()
    event_id = receiver.events()[0]["id"]

    response = client.post(
        f"/api/v1/events/{event_id}/redeliver", json={"endpoint_id": second.public_id}, headers=auth
    )

    assert response.status_code == 202
    [record] = response.get_json()["data"]
    assert record["url"] == second_receiver.url
    deliver_all()
    assert (len(receiver.received), len(first_receiver.received)) == (1, 1)
    assert [e["id"] for e in second_receiver.events()] == [event_id, event_id]


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({"endpoint_id": "we_000000000000000000000000"}, 404, None),
        ({"endpoint_id": "nope"}, 404, None),
        ({"endpoint_id": 5}, 422, "endpoint_id"),
        ({"endpoint_id": ""}, 422, "endpoint_id"),
        ({"endpoint_id": "we_" + "0" * 60}, 422, "endpoint_id"),
    ],
)
def test_redelivery_to_a_bad_endpoint_id_is_refused(client, auth, brand, body, status, field):
    [event_id] = events_at(brand, ["payment.completed"])
    response = client.post(f"/api/v1/events/{event_id}/redeliver", json=body, headers=auth)
    assert response.status_code == status
    if field:
        assert response.get_json()["errors"][0]["field"] == field
    else:
        assert response.get_json()["code"] == "WEBHOOK_ENDPOINT_NOT_FOUND"


def test_redelivery_with_nowhere_to_go_is_a_conflict(client, auth, brand, endpoint_receivers):
    [event_id] = events_at(brand, ["payment.completed"])
    endpoint, _ = endpoint_receivers(["payment.completed"], enabled=False)

    for body in (None, {"endpoint_id": endpoint.public_id}):
        response = client.post(f"/api/v1/events/{event_id}/redeliver", json=body, headers=auth)
        assert response.status_code == 409
        assert response.get_json()["code"] == "INVALID_STATE"
    assert db.session.execute(db.select(WebhookDelivery)).first() is None


def test_a_test_key_cannot_replay_to_a_live_endpoint(
    client, auth, test_auth, brand, endpoint_receivers
):
    live, _ = endpoint_receivers(["*"])
    [event_id] = events_at(brand, ["payment.completed"], livemode=False)
    response = client.post(
        f"/api/v1/events/{event_id}/redeliver",
        json={"endpoint_id": live.public_id},
        headers=test_auth,
    )
    assert response.status_code == 404
    assert response.get_json()["code"] == "WEBHOOK_ENDPOINT_NOT_FOUND"


def test_a_keys_delivery_log_holds_its_own_mode_only(
    client, auth, test_auth, brand, endpoint_receivers
):
    live, live_receiver = endpoint_receivers(["*"])
    test, test_receiver = endpoint_receivers(["*"], livemode=False)
    completed_payment(brand=brand)
    completed_payment(brand=brand, livemode=False)

    live_log = client.get("/api/v1/webhooks/deliveries", headers=auth).get_json()["data"]
    test_log = client.get("/api/v1/webhooks/deliveries", headers=test_auth).get_json()["data"]

    assert [d["url"] for d in live_log] == [live_receiver.url]
    assert [d["url"] for d in test_log] == [test_receiver.url]
    for headers, other in ((auth, test_log[0]["id"]), (test_auth, live_log[0]["id"])):
        for response in (
            client.get(f"/api/v1/webhooks/deliveries/{other}", headers=headers),
            client.post(f"/api/v1/webhooks/deliveries/{other}/retry", headers=headers),
        ):
            assert response.status_code == 404
            assert response.get_json()["code"] == "WEBHOOK_DELIVERY_NOT_FOUND"
    detail = client.get(
        f"/api/v1/webhooks/deliveries/{test_log[0]['id']}", headers=test_auth
    ).get_json()["data"]
    assert (detail["livemode"], detail["endpoint_id"]) == (False, test.public_id)
    assert detail["event_id"] == listed(client, test_auth)["data"][0]["id"]
