"""/api/mobile/v1/openapi.json is a valid OpenAPI 3 document of every companion-app route, from its
request schemas.
"""

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
            path = rule.rule.replace("<", "{").replace(">", "}")
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
