"""Schemathesis over /api/v1's OpenAPI document: every schema-valid request is accepted (or refused
for a documented reason), no answer is a 5xx, and every answer matches its documented schema.

Short, seeded and bounded (derandomized Hypothesis, a few examples per operation, no example
database) so that it runs in the normal suite; `make test` runs it on SQLite.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
)

from gateway.extensions import db
from tests.factories import CustomerFactory, UserFactory

EXAMPLES = 8
# Metadata keys for the run: any 1 to 40 characters would do, which OpenAPI 3.0 can only say in
# words.
METADATA_KEYS = ("order_id", "কোড", "x" * 40, "note")
SUPER_ADMIN = "root@example.com"
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    content_type_conformance,
    positive_data_acceptance,
]


@pytest.fixture
def api_schema(app, brand, monkeypatch, httpserver):
    """The live document; positive requests only (what the schema promises).

    Facts no document of a multi-brand API can hold are added for the brand under test: its
    currencies and its customers' ids, and what OpenAPI 3.0 can only say in words: metadata keys
    have 1 to 40 characters, no text holds a NUL character, a payment link's minimum is not above
    its maximum (here: minimums under 1000, maximums from 1000) and asks for a name or phone at most
    once (here: one question), an invoice's total is positive and within MAX_AMOUNT with its
    discount under its subtotal (here: up to ten lines of at most 9 × 9999.99, no discount) and its
    customer exists or is reachable (here: an existing one), and an export spans at most ten years,
    `from` before `to` (here: from the 2020s' first half to their second). Callbacks to any address
    are allowed, as on a private deployment, so that the run needs no DNS.
    """
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", True)
    brand.webhook_url = httpserver.url_for("/webhooks")  # test events with no url go here
    db.session.commit()
    httpserver.expect_request("/webhooks").respond_with_data("ok")
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    body = document["components"]["schemas"]["PaymentCreate"]["properties"]
    body["currency"]["enum"] = brand.currency_list
    metadata = body["metadata"]
    metadata["properties"] = {key: metadata["additionalProperties"] for key in METADATA_KEYS}
    metadata["additionalProperties"] = False
    schemas = document["components"]["schemas"]
    for name in ("PaymentLinkCreate", "InvoiceCreate", "InvoiceUpdate"):
        schemas[name]["properties"]["currency"]["enum"] = brand.currency_list
    customer = CustomerFactory(brand=brand)
    db.session.commit()
    for name in ("InvoiceCreate", "InvoiceUpdate"):
        invoice = schemas[name]
        invoice["properties"]["customer_id"]["enum"] = [str(customer.id)]
        invoice["properties"].pop("customer")
        invoice.pop("anyOf", None)
        invoice["properties"]["discount"] = {"type": "string", "enum": ["0.00"]}
        invoice["properties"]["items"]["maxItems"] = 10
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
    schema = schemathesis.openapi.from_dict(document)
    schema.app = app
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE],
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


@pytest.fixture
def credentials(brand, make_key):
    """A key with every scope, and the super-administrator the key endpoints ask for."""
    UserFactory(brand=brand, role="super_admin", email=SUPER_ADMIN)
    return {
        **make_key(brand, scopes=("read", "write", "admin")),
        "X-Super-Admin-Email": SUPER_ADMIN,
    }


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_keeps_every_promise_of_its_openapi_document(case, credentials):
    case.call_and_validate(headers=credentials, checks=CHECKS)
