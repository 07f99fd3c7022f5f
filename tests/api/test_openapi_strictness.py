"""The OpenAPI document promises no more than the validators take (issue 14, finding 5)."""

import re

import pytest

from gateway.api.openapi_rules import integer_digits_below, positive_amount_schema
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
