"""/api/v1/openapi.json is a valid OpenAPI 3 document that describes the answers the API really gives."""
import re
import uuid

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from tests.factories import CustomerFactory, UserFactory, completed_payment

OPERATIONS = [
    ("post", "/api/v1/payments"), ("get", "/api/v1/payments"), ("get", "/api/v1/payments/{payment_id}"),
    ("post", "/api/v1/payments/{payment_id}/cancel"),
    ("get", "/api/v1/transactions"), ("get", "/api/v1/transactions/{trx_id}"),
    ("post", "/api/v1/refunds"), ("get", "/api/v1/refunds"), ("get", "/api/v1/refunds/{refund_id}"),
    ("post", "/api/v1/customers"), ("get", "/api/v1/customers"), ("get", "/api/v1/customers/{ident}"),
    ("patch", "/api/v1/customers/{ident}"), ("delete", "/api/v1/customers/{ident}"),
    ("get", "/api/v1/api-keys"), ("post", "/api/v1/api-keys"), ("delete", "/api/v1/api-keys/{key_id}"),
    ("get", "/api/v1/webhooks/deliveries"), ("post", "/api/v1/webhooks/deliveries/{delivery_id}/retry"),
    ("post", "/api/v1/webhooks/tests"),
    ("get", "/api/v1/sms/outbound"), ("post", "/api/v1/sms/outbound"),
    ("post", "/api/v1/sms/outbound/{message_id}/retry"),
    ("get", "/api/v1/dashboard/summary"),
]


@pytest.fixture
def spec(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json


def test_the_document_is_valid_openapi_3_at_version_1_0_0(spec):
    validate(spec)

    assert spec["openapi"].startswith("3.")
    assert spec["info"]["version"] == "1.0.0"
    assert spec["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}


@pytest.mark.parametrize("method, path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_is_documented(spec, method, path):
    assert method in spec["paths"].get(path, {}), f"{method.upper()} {path} is missing"


def test_the_document_needs_no_authentication(client):
    assert client.get("/api/v1/openapi.json", headers={"Authorization": "Bearer wrong"}).status_code == 200


def test_key_operations_document_the_super_admin_header(spec):
    for method, operation in spec["paths"]["/api/v1/api-keys"].items():
        names = {parameter["name"] for parameter in operation.get("parameters", [])}
        assert "X-Super-Admin-Email" in names, method


def test_the_docs_page_loads_nothing_from_another_origin(client):
    response = client.get("/api/v1/docs")

    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assets = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", page)
    assert assets, "the page loads no scripts or styles at all"
    assert not [url for url in assets if re.match(r"(?i)(https?:)?//", url)]
    assert "/api/v1/openapi.json" in page
    for url in assets:
        asset = client.get(url)
        asset.close()
        assert asset.status_code == 200, url


# --- real answers against the document ---------------------------------------------------------


def json_schema(node):
    """An OpenAPI 3.0 schema object as JSON Schema: `nullable` becomes a null type; refs keep pointing into the document."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable"):
        if "type" in converted:
            converted["type"] = [converted["type"], "null"]
        elif "$ref" in converted or "allOf" in converted:
            converted = {"anyOf": [converted, {"type": "null"}]}
    if converted.get("type") == "object" and "properties" in converted:
        # Anything the API sends must be in the document.
        converted.setdefault("additionalProperties", False)
    return converted


def operation_for(spec, method, url):
    """The documented operation a concrete request path belongs to."""
    path = url.split("?")[0]
    for template, operations in spec["paths"].items():
        pattern = "^" + "[^/]+".join(re.escape(part) for part in re.split(r"\{[^}]+\}", template)) + "$"
        if re.match(pattern, path) and method in operations:
            return operations[method]
    raise AssertionError(f"{method.upper()} {path} is not in the document")


def assert_documented(spec, method, url, response):
    """The response's body validates against the schema its operation documents for its status."""
    responses = operation_for(spec, method, url)["responses"]
    documented = responses.get(str(response.status_code)) or responses["default"]
    if "$ref" in documented:
        documented = spec["components"]["responses"][documented["$ref"].rsplit("/", 1)[1]]
    schema = documented["content"]["application/json"]["schema"]
    root = {**json_schema(schema), "components": json_schema(spec["components"])}
    errors = sorted(Draft202012Validator(root).iter_errors(response.json), key=str)
    assert not errors, f"{method.upper()} {url} {response.status_code}: " + "; ".join(
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors[:5])


@pytest.fixture
def admin(brand, make_key):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    return {**make_key(brand, ["read", "write", "admin"]), "X-Super-Admin-Email": "root@example.com"}


def test_real_answers_match_the_documented_schemas(client, spec, brand, admin, make_key):
    calls = []

    def call(method, url, **kwargs):
        response = getattr(client, method)(url, **kwargs)
        calls.append((method, url, response))
        return response

    body = {"amount": "500.00", "currency": "BDT", "reference": "DOC-1", "customer_mail": "doc@example.com",
            "customer_name": "Doc", "customer_phone": "+8801712345678", "metadata": {"cart": 7},
            "callback_url": "https://shop.example/hook"}
    created = call("post", "/api/v1/payments", json=body, headers=admin).json["data"]
    paid = completed_payment(brand=brand, reference="DOC-2")
    call("get", f"/api/v1/payments/{created['payment_id']}", headers=admin)
    call("get", f"/api/v1/payments/{paid.public_id}", headers=admin)
    call("get", "/api/v1/payments?per_page=5", headers=admin)
    call("post", f"/api/v1/payments/{created['payment_id']}/cancel", headers=admin)

    customer = CustomerFactory(brand=brand)
    call("post", "/api/v1/customers", json={"email": "new@example.com", "name": "New"}, headers=admin)
    call("get", "/api/v1/customers", headers=admin)
    call("get", f"/api/v1/customers/{customer.id}", headers=admin)
    call("patch", f"/api/v1/customers/{customer.id}", json={"name": None}, headers=admin)
    call("delete", f"/api/v1/customers/{customer.id}", headers=admin)

    key = call("post", "/api/v1/api-keys", json={"label": "doc", "scopes": ["read"]}, headers=admin).json["data"]
    call("get", "/api/v1/api-keys", headers=admin)
    call("delete", f"/api/v1/api-keys/{key['id']}", headers=admin)

    # Errors: each status the API answers with, in the documented envelope.
    call("get", "/api/v1/payments")  # 401
    call("post", "/api/v1/payments", json=body, headers=make_key(brand, ["read"]))  # 403
    call("get", f"/api/v1/payments/{uuid.uuid4()}", headers=admin)  # 404
    call("post", f"/api/v1/payments/{paid.public_id}/cancel", headers=admin)  # 409
    call("post", "/api/v1/payments", json={"amount": "-1"}, headers=admin)  # 422 with errors
    call("post", "/api/v1/payments", data="{", content_type="application/json", headers=admin)  # 400
    call("post", "/api/v1/payments", data="a=1", content_type="text/plain", headers=admin)  # 415
    call("post", "/api/v1/customers", json={"email": "new@example.com"}, headers=admin)  # 409 with errors
    call("get", "/api/v1/api-keys", headers={"Authorization": admin["Authorization"]})  # 400

    statuses = {response.status_code for _, _, response in calls}
    assert {200, 201, 400, 401, 403, 404, 409, 415, 422} <= statuses
    for method, url, response in calls:
        assert_documented(spec, method, url, response)


def test_the_response_check_catches_an_undocumented_field(client, spec, auth):
    response = client.get("/api/v1/payments", headers=auth)
    response.set_data(response.get_data(as_text=True).replace('"success":true', '"success":true,"surprise":1'))

    with pytest.raises(AssertionError, match="surprise"):
        assert_documented(spec, "get", "/api/v1/payments", response)


def test_the_deliveries_listing_keeps_the_specifications_operation_name(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    assert spec["paths"]["/api/v1/webhooks/deliveries"]["get"]["operationId"] == "listWebhookDeliveries"
