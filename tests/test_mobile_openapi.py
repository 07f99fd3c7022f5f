"""/api/mobile/v1/openapi.json is a valid OpenAPI 3 document of every companion-app route, from its
request schemas.
"""

import re

import pytest
from openapi_spec_validator import validate

MOBILE = "/api/mobile/v1"
DOCUMENT = MOBILE + "/openapi.json"
HTTP_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


@pytest.fixture
def spec(client):
    response = client.get(DOCUMENT)
    assert response.status_code == 200
    return response.json


def mobile_routes(app):
    """(method, OpenAPI path) of every companion-app route the application serves, its document
    aside.
    """
    routes = set()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(MOBILE + "/") and rule.rule != DOCUMENT:
            path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)  # <conv:name> is {name}
            routes.update((method.lower(), path) for method in rule.methods & HTTP_METHODS)
    return routes


def test_the_mobile_document_is_valid_openapi_3(spec):
    validate(spec)

    assert spec["openapi"].startswith("3.")
    assert spec["components"]["securitySchemes"]["device"] == {"type": "http", "scheme": "bearer"}


def test_every_mobile_route_is_in_the_mobile_document(app, spec):
    routes = mobile_routes(app)

    assert (
        len(routes) >= 11
    )  # pairing, refresh, heartbeat, unpair, SMS, lease, report, rules, notifications x2, dashboard
    missing = {
        (method, path) for method, path in routes if method not in spec["paths"].get(path, {})
    }
    assert not missing


def test_the_mobile_document_holds_no_merchant_route_and_the_merchant_one_no_mobile_route(
    client, spec
):
    merchant = client.get("/api/v1/openapi.json").json

    assert all(path.startswith(MOBILE + "/") for path in spec["paths"])
    assert not [path for path in merchant["paths"] if path.startswith(MOBILE)]


@pytest.mark.parametrize(
    "path, schema",
    [
        ("/devices", "PairDevice"),
        ("/devices/token-refreshes", "TokenRefresh"),
        ("/devices/heartbeats", "Heartbeat"),
        ("/sms", "SmsBatch"),
        ("/notifications/acknowledgements", "Acknowledge"),
        ("/sms/queues/{message_id}/results", "OutboundResult"),
    ],
)
def test_each_body_is_documented_by_the_schema_that_validates_it(spec, path, schema):
    body = spec["paths"][MOBILE + path]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]

    assert body == {"$ref": f"#/components/schemas/{schema}"}
    assert spec["components"]["schemas"][schema]["properties"]


def test_pairing_needs_no_token_and_every_other_route_the_device_token(app, spec):
    for method, path in mobile_routes(app):
        security = spec["paths"][path][method].get("security", spec["security"])
        expected = (
            []
            if path in (MOBILE + "/devices", MOBILE + "/devices/token-refreshes")
            else [{"device": []}]
        )
        assert security == expected, f"{method.upper()} {path}"


def test_the_lease_limit_is_documented_with_its_bounds(spec):
    (limit,) = spec["paths"][MOBILE + "/sms/queues"]["get"]["parameters"]

    assert (limit["name"], limit["in"]) == ("limit", "query")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 50)


def test_the_mobile_document_needs_no_token(client):
    assert client.get(DOCUMENT, headers={"Authorization": "Bearer wrong"}).status_code == 200


def test_pairing_documents_the_fingerprint_as_optional(spec):
    pair = spec["components"]["schemas"]["PairDevice"]

    assert set(pair["required"]) == {"pairing_code", "device_id", "device_name"}
    assert pair["properties"]["fingerprint"]["maxLength"] == 128
    assert "device_id is pinned" in pair["properties"]["fingerprint"]["description"]


# --- answers: documented, and the real ones match --------------------------------------------


def test_every_mobile_operation_documents_its_success_answer(app, spec):
    for method, path in mobile_routes(app):
        responses = spec["paths"][path][method]["responses"]
        success = [status for status in responses if status.startswith("2")]
        assert len(success) == 1, f"{method.upper()} {path}: {sorted(responses)}"
        schema = responses[success[0]]["content"]["application/json"]["schema"]
        name = schema["$ref"].rsplit("/", 1)[1]
        assert {"success", "data"} <= set(spec["components"]["schemas"][name]["properties"])


def test_the_documented_error_envelope_carries_the_message_in_error(spec):
    error = spec["components"]["responses"]["DEFAULT_ERROR"]["content"]["application/json"]
    schema = spec["components"]["schemas"][error["schema"]["$ref"].rsplit("/", 1)[1]]

    assert schema["properties"]["error"]["type"] == "string"
    assert {"success", "error", "message", "code"} <= set(schema["required"])


def test_the_console_apps_fields_are_documented(spec):
    """What OwnPay Console reads (tests/devices/test_ownpay_console.py says where) is promised."""
    schemas = spec["components"]["schemas"]

    assert set(schemas["PhoneToday"]["required"]) >= {"revenue", "total", "pending"}
    assert schemas["PhoneToday"]["properties"]["revenue"]["type"] == "string"
    assert set(schemas["RecentTransaction"]["required"]) >= {
        "trx_id",
        "amount",
        "currency",
        "status",
        "gateway",
        "created_at",
    }
    dashboard = schemas["DeviceDashboard"]
    assert {"today", "recent_transactions", "unread_notifications"} <= set(dashboard["required"])
    feed = schemas["NotificationFeed"]["properties"]["data"]
    assert feed["type"] == "array"
    assert set(schemas["DeviceNotification"]["required"]) == {
        "id",
        "type",
        "title",
        "body",
        "payload",
        "created_at",
    }


def exercise_the_phone(call, brand):
    """Every companion-app route answered with success, and refusals of each kind."""
    from gateway.devices.pairing import create_pairing_code
    from gateway.extensions import db
    from gateway.sms.matching import submit_claim
    from gateway.sms.outbound import queue_sms
    from tests.factories import PaymentFactory, bkash_text, completed_payment, sms_message

    completed_payment(brand=brand)
    pairing = {"pairing_code": create_pairing_code(brand), "device_id": "a" * 32}
    paired = call("post", "/devices", json={**pairing, "device_name": "Phone"}).json["data"]
    call("post", "/devices", json=pairing)  # 422: no device_name
    call("post", "/devices", data="x", content_type="text/plain")  # 415
    refresh = {"refresh_token": paired["refresh_token"], "fingerprint": "a" * 32}
    tokens = call("post", "/devices/token-refreshes", json=refresh).json["data"]
    mismatch = {"refresh_token": tokens["refresh_token"], "fingerprint": "b" * 32}
    call("post", "/devices/token-refreshes", json=mismatch)  # 401, the device stays paired
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    call("post", "/devices/heartbeats", headers=headers, json={"battery_level": 80})
    call("post", "/devices/heartbeats", headers=headers, json={"battery_level": 900})  # 422
    call("get", "/config/filter-rules", headers=headers)
    call("get", "/config/filter-rules")  # 401
    payment = PaymentFactory(brand=brand)
    submit_claim(payment, "bkash", "8N7A6B5C4D")
    messages = [
        sms_message(paired["aes_key"], bkash_text("500.00", "8N7A6B5C4D")),
        {"local_id": "bad", "sender": "bKash", "encrypted_payload": "nope"},
    ]
    call("post", "/sms", headers=headers, json={"messages": messages})
    call("post", "/sms", headers=headers, json={"messages": []})  # 422
    queue_sms(brand, "+8801700000001", "Receipt")
    db.session.commit()
    leased = call("get", "/sms/queues", headers=headers).json["data"]["messages"]
    call("get", "/sms/queues?limit=0", headers=headers)  # 422
    result = {"status": "failed", "error": "No signal"}
    call("post", f"/sms/queues/{leased[0]['id']}/results", headers=headers, json=result)
    call("post", "/sms/queues/999999/results", headers=headers, json=result)  # 404
    notes = call("get", "/notifications", headers=headers).json["data"]
    ids = {"ids": [note["id"] for note in notes]}
    call("post", "/notifications/acknowledgements", headers=headers, json=ids)
    call("post", "/notifications/acknowledgements", headers=headers, json={"ids": []})  # 422
    call("get", "/dashboard", headers=headers)
    call("delete", "/devices/someone-else", headers=headers)  # 404
    call("delete", "/devices/self", headers=headers)
    call("get", "/dashboard", headers=headers)  # 401: unpaired


class MobileRecorder:
    """Calls under /api/mobile/v1, each kept to check its answer against the document after."""

    def __init__(self, client):
        self.client = client
        self.calls = []

    def __call__(self, method, path, **kwargs):
        response = getattr(self.client, method)(MOBILE + path, **kwargs)
        self.calls.append((method, MOBILE + path, response))
        return response


def test_real_mobile_answers_match_the_documented_schemas(app, client, spec, brand):
    from tests.api.test_openapi import assert_documented, template_for

    call = MobileRecorder(client)
    exercise_the_phone(call, brand)

    statuses = {response.status_code for _, _, response in call.calls}
    assert {200, 201, 401, 404, 415, 422} <= statuses
    for method, url, response in call.calls:
        assert_documented(spec, method, url, response)
    answered = {
        (method, template_for(spec, method, url))
        for method, url, response in call.calls
        if response.status_code < 300
    }
    assert mobile_routes(app) - answered == set(), "operations never answered with success here"


def test_the_answer_check_catches_an_undocumented_field(client, spec, brand):
    from tests.api.test_openapi import assert_documented
    from tests.factories import paired_device

    _, tokens, _ = paired_device(brand)
    response = client.get(
        MOBILE + "/dashboard", headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    response.set_data(
        response.get_data(as_text=True).replace('"today":{', '"today":{"surprise":1,')
    )

    with pytest.raises(AssertionError, match="surprise"):
        assert_documented(spec, "get", MOBILE + "/dashboard", response)


@pytest.mark.parametrize("path", ["/devices/heartbeats", "/devices/token-refreshes"])
def test_a_devices_own_route_does_not_advertise_unpairing(client, brand, path):
    """`DELETE /devices/{ref}` names `self` or a uuid, so OPTIONS of a sibling route lists only its
    own methods (schemathesis's allow_header_conformance), and such a name is no device.
    """
    from tests.factories import paired_device

    _, tokens, _ = paired_device(brand)
    auth = {"Authorization": f"Bearer {tokens['access_token']}"}

    response = client.options(MOBILE + path, headers=auth)
    unpaired = client.delete(MOBILE + path, headers=auth)

    assert set(response.headers["Allow"].split(", ")) == {"POST", "OPTIONS"}
    assert unpaired.status_code == 405
    assert client.get(MOBILE + "/dashboard", headers=auth).status_code == 200
