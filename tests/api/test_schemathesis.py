"""Schemathesis over both OpenAPI documents, the merchant API's (/api/v1) and the companion app's
(/api/mobile/v1): every check schemathesis has, on schema-valid requests (accepted, or refused for a
documented reason: no such row, a state that forbids the move) and on schema-violating ones
(refused), every answer in its documented status, type and schema.

Checks of a sequence (use_after_free, ensure_resource_availability) need schemathesis's own engine
and its stateful phase, which reaches few of the payment links' routes here: what a deleted link
answers is tested in tests/links/test_payment_links_api.py.

Short, seeded and bounded (derandomized Hypothesis, a few examples per operation, no example
database) so that it runs in the normal suite; `make test` runs it on SQLite.
"""

import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.modes import GenerationMode

from gateway.devices.pairing import create_pairing_code
from gateway.extensions import db
from tests.factories import CustomerFactory, UserFactory, paired_device

EXAMPLES = 8
# Metadata keys for the run: any 1 to 40 characters would do, which OpenAPI 3.0 can only say in
# words.
METADATA_KEYS = ("order_id", "কোড", "x" * 40, "note")
SUPER_ADMIN = "root@example.com"
MOBILE = "/api/mobile/v1"
TEST_MODE = "/api/v1/test/"
HYPOTHESIS = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def configured(app, document):
    """A schemathesis schema of `document` over the app: both modes, every check, seeded."""
    schema = schemathesis.openapi.from_dict(document)
    schema.app = app
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
        max_examples=EXAMPLES,
        deterministic=True,
        database="none",
        allow_x00=False,  # NUL cannot be stored: refused on its field, as the document's intro says
    )
    schema.config.phases.update(phases=["examples", "fuzzing"])
    # positive_data_acceptance: a valid request may still find no such row (404) or a state that
    # forbids the move (409); anything else, a 422 above all, means the document promised too much.
    schema.config.checks.positive_data_acceptance.expected_statuses = ["2xx", "404", "409"]
    return schema


def merchant_document(app, brand):
    """The live /api/v1 document, with the facts it cannot hold added for the brand under test.

    Its customers' ids, and what OpenAPI 3.0 can only say in words: metadata keys have 1 to 40
    characters, no text holds a NUL character, a payment link's minimum is not above its maximum
    (here: minimums under 1000, maximums from 1000) and asks for a name or phone at most once (here:
    one question), an invoice's total is positive and within MAX_AMOUNT with its discount under its
    subtotal (here: up to ten lines of at most 9 × 9999.99, no discount) and its customer exists or
    is reachable (here: an existing one), and an export spans at most ten years, `from` not after
    `to` (here: from the 2020s' first half to their second; the parameters say the rule). The
    currencies are the document's own: those the brands accept.
    """
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    body = document["components"]["schemas"]["PaymentCreate"]["properties"]
    metadata = body["metadata"]
    metadata["properties"] = {key: metadata["additionalProperties"] for key in METADATA_KEYS}
    metadata["additionalProperties"] = False
    schemas = document["components"]["schemas"]
    # A spare customer first, as a spare key in `credentials`: a generated DELETE of id 1 takes it,
    # not the invoices' customer.
    CustomerFactory(brand=brand)
    customer = CustomerFactory(brand=brand)
    db.session.commit()
    for name in ("InvoiceCreate", "InvoiceUpdate"):
        invoice = schemas[name]
        invoice["properties"]["customer_id"]["enum"] = [str(customer.id)]
        invoice["properties"].pop("customer")
        invoice.pop("anyOf", None)
        invoice["properties"]["discount"] = {"type": "string", "enum": ["0.00"]}
        invoice["properties"]["items"]["maxItems"] = 10
    for rule in schemas["InvoiceUpdate"]["allOf"]:  # `customer` is no longer a field to name
        rule["anyOf"] = [one for one in rule["anyOf"] if one.get("required") != ["customer"]]
    schemas["InvoiceCreate"]["required"] = [*schemas["InvoiceCreate"]["required"], "customer_id"]
    line = schemas["InvoiceItemIn"]["properties"]
    line["quantity"] = {"type": "string", "pattern": "^[1-9]$"}
    line["unit_price"] = {"type": "string", "pattern": r"^[1-9][0-9]{0,3}\.[0-9]{2}$"}
    for name in ("PaymentLinkCreate", "PaymentLinkUpdate"):
        bounds = schemas[name]["properties"]
        bounds["min_amount"] = {"type": "string", "pattern": r"^[1-9][0-9]{0,2}\.[0-9]{2}$"}
        bounds["max_amount"] = {"type": "string", "pattern": r"^[1-9][0-9]{3,4}\.[0-9]{2}$"}
        bounds["custom_fields"]["maxItems"] = 1
    day = r"(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$"
    for path, item in document["paths"].items():
        if path.startswith("/api/v1/exports/"):
            for parameter in item["get"]["parameters"]:
                years = "202[0-4]" if parameter["name"] == "from" else "202[5-9]"
                parameter["schema"] = {"type": "string", "pattern": f"^{years}-{day}"}
    return document


@pytest.fixture
def api_schema(app, brand, monkeypatch, httpserver):
    """The merchant API's live document, completed as merchant_document says.

    Callbacks to any address are allowed, as on a private deployment, so that the run needs no DNS.
    """
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", True)
    brand.webhook_url = httpserver.url_for("/webhooks")  # test events with no url go here
    db.session.commit()
    httpserver.expect_request("/webhooks").respond_with_data("ok")
    document = merchant_document(app, brand)
    # Test mode's routes take a test key: their own run below (test_mode_schema).
    document["paths"] = {
        path: item for path, item in document["paths"].items() if not path.startswith(TEST_MODE)
    }
    return configured(app, document)


@pytest.fixture
def test_mode_schema(app, brand):
    """Test mode's routes of the merchant API's document (POST /test/payments/{id}/simulate)."""
    document = merchant_document(app, brand)
    document["paths"] = {
        path: item for path, item in document["paths"].items() if path.startswith(TEST_MODE)
    }
    return configured(app, document)


@pytest.fixture
def test_credentials(brand):
    """A test key (gw_test_…) with every scope: test mode's routes refuse live keys (403)."""
    from gateway.accounts.api_keys import generate_key

    _, secret = generate_key(brand, "schemathesis-tests", ["read", "write"], livemode=False)
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def credentials(brand, make_key):
    """A key with every scope, and the super-administrator the key endpoints ask for.

    A spare key is made first: a generated `DELETE /api-keys/1` (Hypothesis draws "1" often, and
    which values it draws moves with the code's constants) then revokes it, not the run's own key.
    """
    UserFactory(brand=brand, role="super_admin", email=SUPER_ADMIN)
    make_key(brand, scopes=("read",))
    return {
        **make_key(brand, scopes=("read", "write", "admin")),
        "X-Super-Admin-Email": SUPER_ADMIN,
    }


@pytest.fixture
def mobile_schema(app):
    """The companion app's live document as it is: it needs no fact added."""
    return configured(app, app.test_client().get(MOBILE + "/openapi.json").get_json())


@pytest.fixture
def device_token(brand):
    """A paired phone's access token."""
    _, tokens, _ = paired_device(brand)
    return {"Authorization": f"Bearer {tokens['access_token']}"}


merchant = schemathesis.pytest.from_fixture("api_schema")
mobile = schemathesis.pytest.from_fixture("mobile_schema")
test_mode = schemathesis.pytest.from_fixture("test_mode_schema")


@merchant.parametrize()
@HYPOTHESIS
def test_the_api_keeps_every_promise_of_its_openapi_document(case, credentials):
    """A valid request carries live credentials; a case whose headers were made schema-violating
    keeps the ones generated, so that their refusal is what is checked."""
    headers = credentials
    generated = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    if generated is not None and generated.mode is GenerationMode.NEGATIVE:
        left_out = case.headers.keys() | removed_headers(case)
        headers = {name: value for name, value in credentials.items() if name not in left_out}
    case.call_and_validate(headers=headers)


def removed_headers(case):
    """The headers a negative case removed on purpose (a `required` one dropped): not put back."""
    names = set()
    for mutation in getattr(case.meta.phase.data, "mutations", ()):
        if (
            mutation.parameter_location is ParameterLocation.HEADER
            and "required" in mutation.keywords
        ):
            dropped = mutation.original_value
            names.update(dropped if isinstance(dropped, list) else [dropped])
    return names


@test_mode.parametrize()
@HYPOTHESIS
def test_test_mode_keeps_every_promise_of_its_openapi_document(case, test_credentials):
    """Test mode's routes with a test key's credentials, as the merchant API's run above."""
    headers = test_credentials
    generated = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    if generated is not None and generated.mode is GenerationMode.NEGATIVE:
        left_out = case.headers.keys() | removed_headers(case)
        headers = {name: value for name, value in test_credentials.items() if name not in left_out}
    case.call_and_validate(headers=headers)


@mobile.parametrize()
@HYPOTHESIS
def test_the_companion_api_keeps_every_promise_of_its_openapi_document(case, brand, device_token):
    """Pairing codes, refresh tokens and the fingerprint pinned at pairing are secrets no document
    holds: a valid request gets live ones.
    """
    if case.meta.generation.mode is GenerationMode.POSITIVE and isinstance(case.body, dict):
        if case.operation.path == MOBILE + "/devices":
            case.body["pairing_code"] = create_pairing_code(brand)
        elif case.operation.path == MOBILE + "/devices/token-refreshes":
            fingerprint = uuid.uuid4().hex
            _, tokens, _ = paired_device(brand, fingerprint=fingerprint)
            case.body.update(refresh_token=tokens["refresh_token"], fingerprint=fingerprint)
    if case.operation.method == "delete":  # unpairing: a phone of its own, the others' stays
        _, tokens, _ = paired_device(brand)
        device_token = {"Authorization": f"Bearer {tokens['access_token']}"}
    case.call_and_validate(headers=device_token)
