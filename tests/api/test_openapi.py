"""/api/v1/openapi.json is a valid OpenAPI 3 document that describes the answers the API really
gives.
"""

import re
import uuid

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from tests.factories import CustomerFactory, UserFactory, completed_payment
from tests.webhook_support import receiver  # noqa: F401,F811 - fixture

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}
OPERATIONS = [
    ("post", "/api/v1/payments"),
    ("get", "/api/v1/payments"),
    ("get", "/api/v1/payments/{payment_id}"),
    ("post", "/api/v1/payments/{payment_id}/cancel"),
    ("get", "/api/v1/transactions"),
    ("get", "/api/v1/transactions/{trx_id}"),
    ("post", "/api/v1/refunds"),
    ("get", "/api/v1/refunds"),
    ("get", "/api/v1/refunds/{refund_id}"),
    ("post", "/api/v1/customers"),
    ("get", "/api/v1/customers"),
    ("get", "/api/v1/customers/{ident}"),
    ("patch", "/api/v1/customers/{ident}"),
    ("delete", "/api/v1/customers/{ident}"),
    ("get", "/api/v1/api-keys"),
    ("post", "/api/v1/api-keys"),
    ("delete", "/api/v1/api-keys/{key_id}"),
    ("get", "/api/v1/webhooks/deliveries"),
    ("get", "/api/v1/webhooks/deliveries/{delivery_id}"),
    ("post", "/api/v1/webhooks/deliveries/{delivery_id}/retry"),
    ("post", "/api/v1/webhooks/tests"),
    ("get", "/api/v1/sms/outbound"),
    ("post", "/api/v1/sms/outbound"),
    ("post", "/api/v1/sms/outbound/{message_id}/retry"),
    ("get", "/api/v1/dashboard/summary"),
    ("get", "/api/v1/events"),
    ("get", "/api/v1/events/{event_id}"),
    ("post", "/api/v1/events/{event_id}/redeliver"),
    ("get", "/api/v1/webhook-endpoints"),
    ("post", "/api/v1/webhook-endpoints"),
    ("get", "/api/v1/webhook-endpoints/{endpoint_id}"),
    ("patch", "/api/v1/webhook-endpoints/{endpoint_id}"),
    ("delete", "/api/v1/webhook-endpoints/{endpoint_id}"),
    ("post", "/api/v1/webhook-endpoints/{endpoint_id}/rotate-secret"),
    ("post", "/api/v1/test/payments/{payment_id}/simulate"),
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
    assert (
        client.get("/api/v1/openapi.json", headers={"Authorization": "Bearer wrong"}).status_code
        == 200
    )


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
    """An OpenAPI 3.0 schema object as JSON Schema: `nullable` becomes a null type; refs stay."""
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


def template_for(spec, method, url):
    """The documented path template a concrete request path belongs to."""
    path = url.split("?")[0]
    for template, operations in spec["paths"].items():
        pattern = (
            "^" + "[^/]+".join(re.escape(part) for part in re.split(r"\{[^}]+\}", template)) + "$"
        )
        if re.match(pattern, path) and method in operations:
            return template
    raise AssertionError(f"{method.upper()} {path} is not in the document")


def operation_for(spec, method, url):
    """The documented operation a concrete request path belongs to."""
    return spec["paths"][template_for(spec, method, url)][method]


def assert_documented(spec, method, url, response):
    """The response's body validates against the schema its operation documents for its status."""
    responses = operation_for(spec, method, url)["responses"]
    documented = responses.get(str(response.status_code)) or responses["default"]
    if "$ref" in documented:
        documented = spec["components"]["responses"][documented["$ref"].rsplit("/", 1)[1]]
    if response.mimetype == "text/csv":  # the CSV exports: documented as text/csv
        assert "text/csv" in documented["content"], f"{method.upper()} {url}: CSV not documented"
        return
    schema = documented["content"]["application/json"]["schema"]
    root = {**json_schema(schema), "components": json_schema(spec["components"])}
    errors = sorted(Draft202012Validator(root).iter_errors(response.json), key=str)
    assert not errors, f"{method.upper()} {url} {response.status_code}: " + "; ".join(
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors[:5]
    )


@pytest.fixture
def admin(brand, make_key):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    return {
        **make_key(brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "root@example.com",
    }


class Recorder:
    """A test client wrapper that keeps every call, to check each answer against the document
    afterwards.
    """

    def __init__(self, client):
        self.client = client
        self.calls = []

    def __call__(self, method, url, **kwargs):
        response = getattr(self.client, method)(url, **kwargs)
        self.calls.append((method, url, response))
        return response


PAYMENT_BODY = {
    "amount": "500.00",
    "currency": "BDT",
    "reference": "DOC-1",
    "customer_mail": "doc@example.com",
    "customer_name": "Doc",
    "customer_phone": "+8801712345678",
    "metadata": {"cart": 7},
    "callback_url": "https://shop.example/hook",
}


def exercise_payments(call, brand, admin, make_key):
    """Every payment operation, a 401, a 403, a 404, a 409, a 422, a 400, a 413 and a 415; returns a
    paid payment.
    """
    created = call("post", "/api/v1/payments", json=PAYMENT_BODY, headers=admin).json["data"]
    paid = completed_payment(brand=brand, reference="DOC-2")
    call("get", f"/api/v1/payments/{created['payment_id']}", headers=admin)
    call("get", f"/api/v1/payments/{paid.public_id}", headers=admin)
    call("get", "/api/v1/payments?per_page=5", headers=admin)
    call("post", f"/api/v1/payments/{created['payment_id']}/cancel", headers=admin)

    call("get", "/api/v1/payments")  # 401 MISSING_TOKEN
    call(
        "get", "/api/v1/payments", headers={"Authorization": "Bearer gw_live_revoked"}
    )  # 401 INVALID_TOKEN
    call("post", "/api/v1/payments", json=PAYMENT_BODY, headers=make_key(brand, ["read"]))  # 403
    call("get", f"/api/v1/payments/{uuid.uuid4()}", headers=admin)  # 404
    call("post", f"/api/v1/payments/{paid.public_id}/cancel", headers=admin)  # 409
    call("post", "/api/v1/payments", json={"amount": "-1"}, headers=admin)  # 422 with errors
    call("get", "/api/v1/payments?page=0", headers=admin)  # 422 on the query
    call(
        "post", "/api/v1/payments", data="{", content_type="application/json", headers=admin
    )  # 400
    call("post", "/api/v1/payments", data="a=1", content_type="text/plain", headers=admin)  # 415
    call(
        "post",
        "/api/v1/payments",
        data='{"reference": "' + "r" * 1024 * 1024 + '"}',
        content_type="application/json",
        headers=admin,
    )  # 413
    keyed = {**admin, "Idempotency-Key": "doc-1"}
    call("post", "/api/v1/payments", json=PAYMENT_BODY, headers=keyed)
    call("post", "/api/v1/payments", json=PAYMENT_BODY, headers=keyed)  # the replay
    call(
        "post", "/api/v1/payments", json={**PAYMENT_BODY, "amount": "1.00"}, headers=keyed
    )  # 422 key reused
    return paid


def exercise_transactions_and_refunds(call, paid, admin):
    """Transactions read and listed; a refund made, listed, read, and one that exceeds what
    remains."""
    trx_id = paid.transaction.trx_id
    call("get", "/api/v1/transactions?per_page=5", headers=admin)
    call("get", f"/api/v1/transactions/{trx_id}", headers=admin)
    call("get", "/api/v1/transactions/TRXAAAAAAAAAAAA", headers=admin)  # 404
    refund = call(
        "post",
        "/api/v1/refunds",
        json={"trx_id": trx_id, "amount": "100.00", "reason": "Doc"},
        headers=admin,
    ).json["data"]
    call(
        "post", "/api/v1/refunds", json={"trx_id": trx_id, "amount": "10000.00"}, headers=admin
    )  # 422 exceeds
    call("get", "/api/v1/refunds?per_page=5", headers=admin)
    call("get", f"/api/v1/refunds/{refund['id']}", headers=admin)
    call("get", "/api/v1/refunds/999999", headers=admin)  # 404
    call("get", "/api/v1/dashboard/summary", headers=admin)


def exercise_customers(call, brand, admin):
    """Every customer operation, a 404 and a 409."""
    customer = CustomerFactory(brand=brand)
    call(
        "post", "/api/v1/customers", json={"email": "new@example.com", "name": "New"}, headers=admin
    )
    call("get", "/api/v1/customers", headers=admin)
    call("get", f"/api/v1/customers/{customer.id}", headers=admin)
    call("patch", f"/api/v1/customers/{customer.id}", json={"name": None}, headers=admin)
    call("delete", f"/api/v1/customers/{customer.id}", headers=admin)
    call("get", f"/api/v1/customers/{customer.id}", headers=admin)  # 404
    call(
        "post", "/api/v1/customers", json={"email": "new@example.com"}, headers=admin
    )  # 409 with errors


def exercise_api_keys(call, admin):
    """Every key operation, a 400 and a 403 of the super-administrator check, a 404 and a 409."""
    key = call(
        "post", "/api/v1/api-keys", json={"label": "doc", "scopes": ["read"]}, headers=admin
    ).json["data"]
    call("post", "/api/v1/api-keys", json={"label": "doc"}, headers=admin)  # 409 LABEL_TAKEN
    call("get", "/api/v1/api-keys", headers=admin)
    call("delete", f"/api/v1/api-keys/{key['id']}", headers=admin)
    call("delete", f"/api/v1/api-keys/{key['id']}", headers=admin)  # 404
    call("get", "/api/v1/api-keys", headers={"Authorization": admin["Authorization"]})  # 400
    call(
        "get", "/api/v1/api-keys", headers={**admin, "X-Super-Admin-Email": "nobody@example.com"}
    )  # 403


def exercise_webhooks(call, receiver, admin):
    """A test event delivered for real, the log, one record with its attempts, a retry, and a
    404."""
    from gateway.webhooks.delivery import deliver_webhook

    delivery = call(
        "post", "/api/v1/webhooks/tests", json={"url": receiver.url}, headers=admin
    ).json["data"]
    deliver_webhook(delivery["id"])
    call("get", "/api/v1/webhooks/deliveries", headers=admin)
    call("get", f"/api/v1/webhooks/deliveries/{delivery['id']}", headers=admin)
    call("post", f"/api/v1/webhooks/deliveries/{delivery['id']}/retry", headers=admin)
    call("get", "/api/v1/webhooks/deliveries/999999", headers=admin)  # 404
    call("post", "/api/v1/webhooks/tests", json={"url": "ftp://shop.example"}, headers=admin)  # 422


def exercise_outbound_sms(call, admin):
    """A message queued, listed, refused a retry while queued (409), and retried once failed."""
    from gateway.extensions import db
    from gateway.sms.models.outbound_sms import OutboundSms

    body = {"to": "01712345678", "body": "Doc"}
    message = call("post", "/api/v1/sms/outbound", json=body, headers=admin).json["data"]
    call("get", "/api/v1/sms/outbound?status=queued", headers=admin)
    call("post", f"/api/v1/sms/outbound/{message['id']}/retry", headers=admin)  # 409
    db.session.execute(
        db.update(OutboundSms).where(OutboundSms.id == message["id"]).values(status="failed")
    )
    db.session.commit()
    call("post", f"/api/v1/sms/outbound/{message['id']}/retry", headers=admin)
    call("post", "/api/v1/sms/outbound/999999/retry", headers=admin)  # 404


def exercise_payment_links_and_exports(call, admin):
    """Payment links (create, list, read, change, disable, enable, void) and the CSV exports."""
    body = {"title": "Eid hamper", "amount": "1500.00", "custom_fields": [{"kind": "name"}]}
    link = call("post", "/api/v1/payment-links", json=body, headers=admin).get_json()["data"]
    call("post", "/api/v1/payment-links", json={"title": ""}, headers=admin)  # 422
    call("get", "/api/v1/payment-links", headers=admin)
    call("get", f"/api/v1/payment-links/{link['id']}", headers=admin)
    call("get", "/api/v1/payment-links/nope-nope", headers=admin)  # 404
    call("patch", f"/api/v1/payment-links/{link['id']}", json={"usage_limit": 5}, headers=admin)
    call("post", f"/api/v1/payment-links/{link['id']}/disable", headers=admin)
    call("post", f"/api/v1/payment-links/{link['id']}/enable", headers=admin)
    call("delete", f"/api/v1/payment-links/{link['id']}", headers=admin)
    call("get", f"/api/v1/payments?payment_link={link['slug']}", headers=admin)
    # Read each CSV to its end: a streamed answer holds its request context until then.
    call(
        "get", "/api/v1/exports/payments.csv?from=2025-01-01&to=2030-01-01", headers=admin
    ).get_data()
    call("get", "/api/v1/exports/refunds.csv", headers=admin).get_data()
    call("get", "/api/v1/exports/invoices.csv", headers=admin).get_data()
    call("get", "/api/v1/exports/refunds.csv?from=2025-02-01&to=2025-01-01", headers=admin)  # 422


def exercise_invoices(call, admin):
    """An invoice created, listed, read, changed while draft, sent by SMS, refused a change,
    voided."""
    body = {
        "customer": {"name": "Doc", "phone": "+8801712345678"},
        "items": [{"description": "Design", "quantity": "2", "unit_price": "500"}],
        "vat_rate": "15",
        "due_date": "2026-12-31",
    }
    invoice = call("post", "/api/v1/invoices", json=body, headers=admin).json["data"]
    url = f"/api/v1/invoices/{invoice['invoice_id']}"
    call("post", "/api/v1/invoices", json={**body, "items": []}, headers=admin)  # 422
    call("get", "/api/v1/invoices?status=draft", headers=admin)
    call("get", url, headers=admin)
    call("patch", url, json={"notes": "Thanks"}, headers=admin)
    call("post", f"{url}/send", json={"channels": ["sms"]}, headers=admin)
    call("patch", url, json={"notes": "Late"}, headers=admin)  # 409
    call("post", f"{url}/void", headers=admin)
    call("get", "/api/v1/invoices/no-such-invoice", headers=admin)  # 404


def exercise_events_and_endpoints(call, receiver, admin):
    """An endpoint created (its secret once), refused, listed, read, changed, rotated and deleted;
    events listed, read and replayed (to the endpoint, then everywhere), and a 404 of each."""
    body = {"url": receiver.url, "enabled_events": ["*"], "description": "Doc"}
    endpoint = call("post", "/api/v1/webhook-endpoints", json=body, headers=admin).json["data"]
    url = f"/api/v1/webhook-endpoints/{endpoint['id']}"
    call("post", "/api/v1/webhook-endpoints", json={**body, "enabled_events": []}, headers=admin)
    call("get", "/api/v1/webhook-endpoints", headers=admin)
    call("get", url, headers=admin)
    call("patch", url, json={"enabled_events": ["payment.completed"]}, headers=admin)
    call("post", f"{url}/rotate-secret", headers=admin)
    event = call("get", "/api/v1/events?type=payment.completed", headers=admin).json["data"][0]
    replay = f"/api/v1/events/{event['id']}/redeliver"
    call("get", f"/api/v1/events/{event['id']}", headers=admin)
    call("post", replay, json={"endpoint_id": endpoint["id"]}, headers=admin)
    call("post", replay, headers=admin)
    call("get", "/api/v1/events/evt_nope", headers=admin)  # 404
    call("delete", url, headers=admin)
    call("get", url, headers=admin)  # 404
    call("post", replay, headers=admin)  # 409: nowhere left to send it, or only its URL


def exercise_test_mode(call, brand, admin):
    """A test payment simulated paid; a live key refused (403), an unknown payment (404), a state
    that does not allow it (409) and a bad outcome (422)."""
    from gateway.accounts.api_keys import generate_key

    _, secret = generate_key(brand, "doc-tests", ["read", "write"], livemode=False)
    test = {"Authorization": f"Bearer {secret}"}
    created = call("post", "/api/v1/payments", json=PAYMENT_BODY, headers=test).json["data"]
    url = f"/api/v1/test/payments/{created['payment_id']}/simulate"
    call("post", url, json={"outcome": "paid"}, headers=test)
    call("post", url, json={"outcome": "expired"}, headers=test)  # 409
    call("post", url, json={"outcome": "later"}, headers=test)  # 422
    call("post", url, json={"outcome": "paid"}, headers=admin)  # 403 TEST_MODE_ONLY
    call(
        "post",
        f"/api/v1/test/payments/{uuid.uuid4()}/simulate",
        json={"outcome": "paid"},
        headers=test,
    )  # 404


def test_real_answers_match_the_documented_schemas(client, spec, brand, admin, make_key, receiver):
    call = Recorder(client)

    paid = exercise_payments(call, brand, admin, make_key)
    exercise_transactions_and_refunds(call, paid, admin)
    exercise_customers(call, brand, admin)
    exercise_api_keys(call, admin)
    exercise_webhooks(call, receiver, admin)
    exercise_outbound_sms(call, admin)
    exercise_payment_links_and_exports(call, admin)
    exercise_invoices(call, admin)
    exercise_events_and_endpoints(call, receiver, admin)
    exercise_test_mode(call, brand, admin)

    statuses = {response.status_code for _, _, response in call.calls}
    assert {200, 201, 202, 400, 401, 403, 404, 409, 413, 415, 422} <= statuses
    for method, url, response in call.calls:
        assert_documented(spec, method, url, response)
    answered = {
        (method, template_for(spec, method, url))
        for method, url, response in call.calls
        if response.status_code < 300
    }
    documented = {
        (method, path)
        for path, operations in spec["paths"].items()
        for method in operations
        if method in HTTP_METHODS
    }
    assert documented - answered == set(), "operations never answered with success here"


def test_the_response_check_catches_an_undocumented_field(client, spec, auth):
    response = client.get("/api/v1/payments", headers=auth)
    response.set_data(
        response.get_data(as_text=True).replace('"success":true', '"success":true,"surprise":1')
    )

    with pytest.raises(AssertionError, match="surprise"):
        assert_documented(spec, "get", "/api/v1/payments", response)


def test_the_deliveries_listing_keeps_the_specifications_operation_name(client):
    spec = client.get("/api/v1/openapi.json").get_json()
    assert (
        spec["paths"]["/api/v1/webhooks/deliveries"]["get"]["operationId"]
        == "listWebhookDeliveries"
    )
