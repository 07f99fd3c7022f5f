"""/webhook-endpoints: several URLs per brand and mode, the secret shown once and sealed at rest,
chosen events checked, rotation under the overlap rule, live and test apart, bad input refused on
its field."""

import socket

import pytest

from gateway.extensions import db
from gateway.webhooks.endpoint_secrets import open_secret
from gateway.webhooks.endpoints import MAX_ENDPOINTS
from gateway.webhooks.models.endpoint import WebhookEndpoint
from tests.endpoint_support import test_auth  # noqa: F401 - fixture

URL = "https://shop.example.com/hooks"


def create(client, headers, **body):
    return client.post(
        "/api/v1/webhook-endpoints",
        json={"url": URL, "enabled_events": ["payment.completed"], **body},
        headers=headers,
    )


def test_creating_answers_the_secret_once_and_seals_it_at_rest(client, auth, brand):
    response = create(client, auth, description="Shop server")

    assert response.status_code == 201
    data = response.get_json()["data"]
    assert data["id"].startswith("we_") and data["secret"].startswith("whsec_")
    assert (data["url"], data["enabled_events"], data["enabled"], data["livemode"]) == (
        URL,
        ["payment.completed"],
        True,
        True,
    )
    row = db.session.execute(db.select(WebhookEndpoint)).scalar_one()
    assert data["secret"] not in row.secret_sealed
    assert open_secret(row.secret_sealed, row.public_id) == data["secret"]
    for read in (
        client.get(f"/api/v1/webhook-endpoints/{data['id']}", headers=auth),
        client.get("/api/v1/webhook-endpoints", headers=auth),
    ):
        assert read.status_code == 200
        assert data["secret"] not in read.get_data(as_text=True)
        assert "secret" not in str(read.get_json()["data"])


def test_an_idempotency_key_never_stores_the_secret(client, auth):
    headers = {**auth, "Idempotency-Key": "endpoint-1"}
    first = create(client, headers)
    second = create(client, headers)
    assert first.status_code == second.status_code == 201
    assert first.get_json()["data"]["secret"] != second.get_json()["data"]["secret"]
    assert "Idempotent-Replayed" not in second.headers


def test_endpoints_are_listed_newest_first_in_pages(client, auth):
    ids = [create(client, auth).get_json()["data"]["id"] for _ in range(3)]
    page = client.get("/api/v1/webhook-endpoints?per_page=2", headers=auth).get_json()
    assert [e["id"] for e in page["data"]] == ids[::-1][:2]
    assert page["meta"] == {"page": 1, "per_page": 2, "total": 3, "total_pages": 2}


def test_a_change_is_answered_and_kept(client, auth):
    endpoint_id = create(client, auth).get_json()["data"]["id"]
    response = client.patch(
        f"/api/v1/webhook-endpoints/{endpoint_id}",
        json={"enabled": False, "enabled_events": ["*"], "url": URL + "/v2"},
        headers=auth,
    )
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert (data["enabled"], data["enabled_events"], data["url"]) == (False, ["*"], URL + "/v2")
    assert "secret" not in data
    again = client.get(f"/api/v1/webhook-endpoints/{endpoint_id}", headers=auth).get_json()
    assert again["data"] == data


def test_a_deleted_endpoint_is_gone(client, auth):
    endpoint_id = create(client, auth).get_json()["data"]["id"]
    response = client.delete(f"/api/v1/webhook-endpoints/{endpoint_id}", headers=auth)
    assert response.status_code == 200
    assert response.get_json()["data"] == {"id": endpoint_id, "deleted": True}
    for method in ("get", "patch", "delete"):
        gone = getattr(client, method)(
            f"/api/v1/webhook-endpoints/{endpoint_id}",
            json={"enabled": True} if method == "patch" else None,
            headers=auth,
        )
        assert gone.status_code == 404
        assert gone.get_json()["code"] == "WEBHOOK_ENDPOINT_NOT_FOUND"
    assert client.get("/api/v1/webhook-endpoints", headers=auth).get_json()["data"] == []


def test_rotation_answers_a_new_secret_and_keeps_the_old_one_for_the_overlap(app, client, auth):
    created = create(client, auth).get_json()["data"]
    response = client.post(f"/api/v1/webhook-endpoints/{created['id']}/rotate-secret", headers=auth)
    assert response.status_code == 200
    data = response.get_json()["data"]
    assert data["secret"].startswith("whsec_") and data["secret"] != created["secret"]
    assert data["secret_previous_until"] is not None
    row = db.session.execute(db.select(WebhookEndpoint)).scalar_one()
    db.session.refresh(row)
    assert open_secret(row.secret_sealed, row.public_id) == data["secret"]
    assert open_secret(row.secret_previous_sealed, row.public_id) == created["secret"]
    assert "secret" not in str(
        client.get(f"/api/v1/webhook-endpoints/{created['id']}", headers=auth).get_json()
    )


def test_live_and_test_keys_never_see_each_others_endpoints(client, auth, test_auth):
    live = create(client, auth).get_json()["data"]
    test = create(client, test_auth).get_json()["data"]
    assert (live["livemode"], test["livemode"]) == (True, False)

    assert [
        e["id"] for e in client.get("/api/v1/webhook-endpoints", headers=auth).json["data"]
    ] == [live["id"]]
    assert [
        e["id"] for e in client.get("/api/v1/webhook-endpoints", headers=test_auth).json["data"]
    ] == [test["id"]]
    for headers, hidden in ((auth, test["id"]), (test_auth, live["id"])):
        for method, path in (
            ("get", ""),
            ("patch", ""),
            ("delete", ""),
            ("post", "/rotate-secret"),
        ):
            response = getattr(client, method)(
                f"/api/v1/webhook-endpoints/{hidden}{path}",
                json={"enabled": False} if method == "patch" else None,
                headers=headers,
            )
            assert response.status_code == 404, (method, path)


def test_another_brands_endpoint_is_not_found(client, auth, other_brand, make_key):
    foreign = create(client, make_key(other_brand)).get_json()["data"]["id"]
    assert client.get(f"/api/v1/webhook-endpoints/{foreign}", headers=auth).status_code == 404


@pytest.mark.parametrize(
    "body, field",
    [
        ({"url": "ftp://shop.example.com/hooks"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "https://shop.example.com/" + "x" * 2048}, "url"),
        ({"url": None}, "url"),
        ({"enabled_events": []}, "enabled_events"),
        ({"enabled_events": ["payment.paid"]}, "enabled_events"),
        ({"enabled_events": ["payment.completed", "compat.uddoktapay"]}, "enabled_events"),
        ({"enabled_events": "payment.completed"}, "enabled_events"),
        ({"enabled_events": None}, "enabled_events"),
        ({"enabled": "maybe"}, "enabled"),
        ({"description": "x" * 201}, "description"),
    ],
)
def test_bad_input_is_refused_on_its_field(client, auth, body, field):
    response = create(client, auth, **body)
    assert response.status_code == 422, response.get_json()
    answer = response.get_json()
    assert answer["code"] == "VALIDATION_ERROR"
    assert answer["errors"][0]["field"] == field
    assert db.session.execute(db.select(WebhookEndpoint)).first() is None


def test_a_missing_url_or_event_list_is_required(client, auth):
    response = client.post("/api/v1/webhook-endpoints", json={}, headers=auth)
    assert response.status_code == 422
    assert {e["field"] for e in response.get_json()["errors"]} == {"url", "enabled_events"}


@pytest.mark.parametrize("body", [{}, {"enabled_events": []}, {"url": "gopher://x"}])
def test_a_bad_change_is_refused_and_changes_nothing(client, auth, body):
    endpoint_id = create(client, auth).get_json()["data"]["id"]
    response = client.patch(f"/api/v1/webhook-endpoints/{endpoint_id}", json=body, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["field"] in ("body", *body)
    kept = client.get(f"/api/v1/webhook-endpoints/{endpoint_id}", headers=auth).get_json()["data"]
    assert (kept["url"], kept["enabled_events"]) == (URL, ["payment.completed"])


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1/hooks", "http://169.254.169.254/", "http://[::1]/"]
)
def test_private_addresses_are_refused_as_for_the_brands_webhook_url(
    app, client, auth, monkeypatch, url
):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    response = create(client, auth, url=url)
    assert response.status_code == 422
    assert response.get_json()["errors"][0] == {
        "field": "url",
        "code": "private_address",
        "message": response.get_json()["errors"][0]["message"],
    }
    endpoint_id = None
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda *args, **kwargs: [(2, 1, 6, "", ("93.184.215.14", 443))]
    )
    endpoint_id = create(client, auth).get_json()["data"]["id"]
    change = client.patch(
        f"/api/v1/webhook-endpoints/{endpoint_id}", json={"url": url}, headers=auth
    )
    assert change.status_code == 422 and change.get_json()["errors"][0]["field"] == "url"


@pytest.mark.parametrize("endpoint_id", ["we_000000000000000000000000", "42", "x" * 300, "%00"])
def test_unknown_endpoint_ids_are_not_found(client, auth, endpoint_id):
    response = client.get(f"/api/v1/webhook-endpoints/{endpoint_id}", headers=auth)
    assert response.status_code == 404
    assert response.get_json()["code"] == "WEBHOOK_ENDPOINT_NOT_FOUND"


def test_a_brand_has_a_bounded_number_of_endpoints_per_mode(client, auth, test_auth):
    for _ in range(MAX_ENDPOINTS):
        assert create(client, auth).status_code == 201
    refused = create(client, auth)
    assert refused.status_code == 409 and refused.get_json()["code"] == "INVALID_STATE"
    assert create(client, test_auth).status_code == 201


def test_a_read_key_cannot_create(client, brand, make_key):
    response = create(client, make_key(brand, scopes=("read",)))
    assert response.status_code == 403
