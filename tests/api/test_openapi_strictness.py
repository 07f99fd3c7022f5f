"""The OpenAPI document promises no more than the validators take (issue 14, finding 5)."""

import re

import pytest

from gateway.api.openapi_rules import (
    CURRENCY_BODIES,
    REQUEST_BODIES,
    UPDATE_BODIES,
    integer_digits_below,
    positive_amount_schema,
)
from gateway.extensions import db
from gateway.money import InvalidAmount, parse_amount


@pytest.fixture
def spec(client):
    return client.get("/api/v1/openapi.json").get_json()


def ecma(pattern):
    """A document's pattern as a JSON Schema validator reads it: `$` is the very end, newline or
    not.
    """
    return re.compile(pattern.replace("$", r"\Z"))


def string_pattern(amount_schema):
    [string] = [branch for branch in amount_schema["oneOf"] if branch["type"] == "string"]
    return ecma(string["pattern"])


@pytest.mark.parametrize("text", ["500.00", "500", "0.5", "0.05", "999999.99", "1.1"])
def test_the_documented_payment_amount_takes_what_the_api_takes(spec, text):
    amount = spec["components"]["schemas"]["PaymentCreate"]["properties"]["amount"]
    assert string_pattern(amount).search(text)
    assert 0 < parse_amount(text) <= parse_amount("1000000.00")


@pytest.mark.parametrize(
    "text",
    ["৫০০", "５００", "5.00\n", " 5", "0", "0.00", "00.00", "1.001", "1000000.01", "1e3", "-1", ""],
)
def test_the_documented_payment_amount_refuses_what_the_api_refuses(spec, text):
    amount = spec["components"]["schemas"]["PaymentCreate"]["properties"]["amount"]
    assert not string_pattern(amount).search(text)


def test_a_documented_whole_number_amount_stays_within_max_amount(spec, app):
    amount = spec["components"]["schemas"]["PaymentCreate"]["properties"]["amount"]
    [number] = [branch for branch in amount["oneOf"] if branch["type"] == "integer"]
    assert number["minimum"] == 1
    assert parse_amount(number["maximum"]) <= parse_amount(app.config["MAX_AMOUNT"])


@pytest.mark.parametrize(
    "maximum, digits",
    [("1000000.00", 6), ("999999.99", 6), ("999999.00", 5), (None, 12), ("9.99", 1), ("5", 0)],
)
def test_integer_digits_never_allow_more_than_the_maximum(maximum, digits):
    assert integer_digits_below(maximum) == digits
    if maximum is not None:
        largest = ("9" * digits or "0") + ".99"
        documented = string_pattern(positive_amount_schema(maximum))
        assert documented.search(largest)
        assert parse_amount(largest) <= parse_amount(maximum)
        assert not documented.search("1" + "0" * digits)  # one digit more is never promised


def test_the_refund_names_exactly_one_transaction_and_may_omit_its_amount(spec):
    refund = spec["components"]["schemas"]["RefundCreate"]
    assert refund["oneOf"] == [{"required": ["trx_id"]}, {"required": ["transaction_id"]}]
    assert refund["properties"]["amount"]["nullable"] is True


def test_request_urls_and_phones_have_patterns_the_validators_accept(spec):
    payment = spec["components"]["schemas"]["PaymentCreate"]["properties"]
    url = ecma(payment["callback_url"]["pattern"])
    assert url.search("https://shop.example/hooks/gateway")
    assert not url.search("javascript:alert(1)") and not url.search("https://shop.example/a b")
    phone = ecma(payment["customer_phone"]["pattern"])
    assert phone.search("+8801712345678") and phone.search("01712345678")
    assert not phone.search("+880ABCDEFGHIJ") and not phone.search("01212345678")


def test_the_positive_amount_schema_without_maximum_keeps_twelve_digits():
    with pytest.raises(InvalidAmount):
        parse_amount("1" * 13)
    assert string_pattern(positive_amount_schema()).search("9" * 12 + ".99")
    assert not string_pattern(positive_amount_schema()).search("1" * 13)


def test_the_documented_currencies_are_those_the_brands_accept(client, brand):
    def documented():
        schemas = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
        return {name: schemas[name]["properties"]["currency"]["enum"] for name in CURRENCY_BODIES}

    before = documented()
    brand.currencies = "USD, eur"
    db.session.commit()

    assert before == {name: ["BDT", "USD"] for name in CURRENCY_BODIES}
    assert documented() == {name: ["USD", "EUR"] for name in CURRENCY_BODIES}


def test_every_request_body_says_unknown_properties_are_ignored(spec):
    for name in REQUEST_BODIES:
        body = spec["components"]["schemas"][name]
        assert body["additionalProperties"] is True, name
        assert body["description"].endswith("Unknown properties are ignored."), name


def test_a_documented_change_names_at_least_one_known_field(spec):
    for name in UPDATE_BODIES:
        body = spec["components"]["schemas"][name]
        [one_known] = [rule["anyOf"] for rule in body["allOf"] if "required" in rule["anyOf"][0]]
        assert [branch["required"] for branch in one_known] == [[key] for key in body["properties"]]
        assert "minProperties" not in body  # {"unknown": 1} would pass it, and is refused


@pytest.mark.parametrize("kind", ["payments", "refunds", "invoices"])
def test_the_exports_document_their_range_rule_and_its_error(spec, kind):
    operation = spec["paths"][f"/api/v1/exports/{kind}.csv"]["get"]
    rule = "`to` is not before `from`, and at most ten years (3660 days) after it"

    assert all(rule in parameter["description"] for parameter in operation["parameters"])
    assert "`to` before `from`" in operation["responses"]["422"]["description"]
