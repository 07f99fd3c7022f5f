"""The OpenAPI document made as strict as the validators: a request it calls valid, the API accepts.

Most rules come from the marshmallow fields themselves (patterns, lengths, formats). What a field
cannot say on its own is added here, once the schemas are registered: an amount is a string or a
whole number within MAX_AMOUNT, a refund names its transaction by exactly one of two keys, metadata
is small and flat. Schemathesis checks the promise in tests/api/test_schemathesis.py.
"""

import copy
from decimal import Decimal

from ..money import CENT
from ..schemas.payment import METADATA_MAX_KEYS

METADATA_KEY_LENGTH = 40
# Request bodies only (answers may hold any value the validators took): what the document promises
# an http(s) URL looks like. Narrower than what is accepted, never wider.
URL_PATTERN = (
    r"^https?://([a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?\.)*[a-z][a-z0-9-]{0,30}[a-z0-9]"
    r"(:[1-9][0-9]{0,3})?(/[A-Za-z0-9._~-]{0,40}){0,5}$"
)
REQUEST_BODIES = (
    "PaymentCreate",
    "RefundCreate",
    "WebhookTest",
    "OutboundSmsCreate",
    "CustomerCreate",
    "CustomerUpdate",
    "ApiKeyCreate",
    "PaymentLinkCreate",
    "PaymentLinkUpdate",
    "InvoiceCreate",
    "InvoiceUpdate",
    "WebhookEndpointCreate",
    "WebhookEndpointUpdate",
    "EventRedeliver",
    "Simulate",
)
# Request bodies that name a currency: the brands' own codes (with_currencies).
CURRENCY_BODIES = ("PaymentCreate", "PaymentLinkCreate", "InvoiceCreate", "InvoiceUpdate")
# PATCH bodies: at least one known field (gateway.schemas.common.ChangeSchema).
UPDATE_BODIES = ("CustomerUpdate", "PaymentLinkUpdate", "InvoiceUpdate", "WebhookEndpointUpdate")
NULL_ONLY = {"nullable": True, "enum": [None]}

# The widest amount the API reads: 12 digits before the point (gateway.money.AMOUNT_PATTERN).
AMOUNT_DIGITS = 12
METADATA_VALUE = {
    "description": "A string of at most 500 characters, a number, a boolean or null.",
    "oneOf": [
        {"type": "string", "maxLength": 500},
        {"type": "number"},
        {"type": "boolean"},
    ],
    "nullable": True,
}


def integer_digits_below(maximum):
    """The most integer digits n such that every amount of n digits (up to 10**n - 0.01) is <=
    maximum.
    """
    if maximum is None:
        return AMOUNT_DIGITS
    maximum = Decimal(str(maximum))
    digits = 0
    while digits < AMOUNT_DIGITS and Decimal(10) ** (digits + 1) - CENT <= maximum:
        digits += 1
    return digits


def positive_amount_schema(maximum=None, description=None):
    """A positive amount: a decimal string with at most two decimals, or a whole JSON number."""
    digits = integer_digits_below(maximum)
    fraction = r"0\.([1-9][0-9]?|0[1-9])"
    whole = rf"[1-9][0-9]{{0,{digits - 1}}}(\.[0-9]{{1,2}})?|" if digits else ""
    branches = [
        {
            "type": "string",
            "pattern": rf"^({whole}{fraction})$",
            "maxLength": max(digits, 1) + 3,
            "example": "500.00",
        }
    ]
    if digits:
        branches.append({"type": "integer", "minimum": 1, "maximum": 10**digits - 1})
    return {
        "oneOf": branches,
        "description": (description + " " if description else "")
        + 'A decimal string with at most two decimals (ASCII digits), e.g. "500.00"; a JSON '
        + "number is also read."
        + (f" At most {maximum}." if maximum is not None else ""),
    }


def tighten_document(spec, config):
    """Add to the registered component schemas what their fields cannot express themselves."""
    schemas = spec.components.schemas
    for name in REQUEST_BODIES:
        # As docs/spec/CONTRACT.md says of payments, and every body reads
        # (schemas.common.BaseSchema).
        schemas[name]["additionalProperties"] = True
        schemas[name]["description"] = (
            schemas[name].get("description", "") + " Unknown properties are ignored."
        ).strip()
        for field, schema in schemas[name]["properties"].items():
            if schema.get("format") == "url":
                schema.pop("format")
                schema.update(pattern=URL_PATTERN, example="https://shop.example/thanks")
    payment = schemas["PaymentCreate"]["properties"]
    payment["amount"] = positive_amount_schema(config.get("MAX_AMOUNT"))
    payment["metadata"].update(
        {
            "maxProperties": METADATA_MAX_KEYS,
            # OpenAPI 3.0 has no propertyNames: the key rule is said in words.
            "description": f"At most {METADATA_MAX_KEYS} keys of 1 to {METADATA_KEY_LENGTH} "
            "characters; each value a short string, a number, a boolean or null.",
            "additionalProperties": METADATA_VALUE,
        }
    )
    # A new customer needs a way to be reached; a change must change something.
    schemas["CustomerCreate"]["anyOf"] = [
        {"required": ["email"], "properties": {"email": {"type": "string"}}},
        {"required": ["phone"], "properties": {"phone": {"type": "string"}}},
    ]
    refund = schemas["RefundCreate"]
    refund["properties"]["amount"] = {
        **positive_amount_schema(description="Omitted or null: refund everything that remains."),
        "nullable": True,
    }
    # Exactly one of the two names of the transaction.
    refund["oneOf"] = [{"required": ["trx_id"]}, {"required": ["transaction_id"]}]
    # A payment link's amounts are positive and within MAX_AMOUNT, like a payment's.
    for name in ("PaymentLinkCreate", "PaymentLinkUpdate"):
        link = schemas[name]["properties"]
        for field in ("amount", "min_amount", "max_amount"):
            described = link[field].get("description")
            link[field] = {
                **positive_amount_schema(config.get("MAX_AMOUNT"), described),
                "nullable": True,
            }
    # A payment link has a fixed amount or bounds the customer chooses within, never both.
    for name in ("PaymentLinkCreate", "PaymentLinkUpdate"):
        schemas[name]["anyOf"] = [
            {"properties": {"min_amount": NULL_ONLY, "max_amount": NULL_ONLY}},
            {"properties": {"amount": NULL_ONLY}},
        ]
    # A change names at least one known field: unknown ones are ignored, so they change nothing.
    for name in UPDATE_BODIES:
        one_known = [{"required": [field]} for field in schemas[name]["properties"]]
        rules = [{"anyOf": one_known}]
        if "anyOf" in schemas[name]:
            rules.insert(0, {"anyOf": schemas[name].pop("anyOf")})
        schemas[name]["allOf"] = rules
    for name in ("PaymentLinkCreate", "PaymentLinkUpdate"):
        schemas[name]["properties"]["slug"]["pattern"] = r"^[a-z0-9]+(-[a-z0-9]+)*$"
    # An invoice is for an existing customer or one described; its lines cost something.
    schemas["InvoiceCreate"]["anyOf"] = [{"required": ["customer_id"]}, {"required": ["customer"]}]
    schemas["InvoiceItemIn"]["properties"]["description"]["pattern"] = r"\S"  # not blank
    schemas["InvoiceItemIn"]["properties"]["unit_price"] = positive_amount_schema(
        config.get("MAX_AMOUNT")
    )


def with_currencies(document, currencies):
    """The document with its request bodies' `currency` held to the codes the brands accept.

    Brands choose their currencies in Settings, so the served document is completed on each request
    (a deployment with no brand yet promises only the code's shape).
    """
    if not currencies:
        return document
    document = copy.deepcopy(document)
    for name in CURRENCY_BODIES:
        field = document["components"]["schemas"][name]["properties"]["currency"]
        field["enum"] = list(currencies)
        field["description"] = (
            field.get("description", "") + " One of the currencies the brand accepts."
        ).strip()
    return document
