"""Issue 14, finding 5: an amount is ASCII digits only; Bangla, full-width or padded digits are
refused on the amount field, and a JSON number keeps working as documented."""

import json
from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.money import InvalidAmount, parse_amount
from gateway.payments.models.payment import Payment

NOT_ASCII_DIGITS = [
    ("bangla digits", "৫০০"),
    ("bangla with decimals", "৫০০.০০"),
    ("full-width digits", "５００"),
    ("arabic-indic digits", "٥٠٠"),
    ("devanagari digits", "५००"),
    ("superscript two", "²"),
    ("trailing newline", "5.00\n"),
    ("leading newline", "\n5.00"),
    ("trailing space", "500.00 "),
    ("leading space", " 500.00"),
    ("tab", "\t500"),
    ("non-breaking space", "500\u00a0"),
    ("mixed digits", "5০0"),
]


@pytest.mark.parametrize("value", [value for _, value in NOT_ASCII_DIGITS])
def test_parse_amount_refuses_anything_but_ascii_digits(value):
    with pytest.raises(InvalidAmount):
        parse_amount(value)


@pytest.mark.parametrize("value, expected", [("500", "500.00"), ("0.5", "0.50"), (500, "500.00")])
def test_parse_amount_still_reads_plain_amounts(value, expected):
    assert parse_amount(value) == Decimal(expected)


@pytest.mark.parametrize(
    "label, value", NOT_ASCII_DIGITS, ids=[label for label, _ in NOT_ASCII_DIGITS]
)
def test_the_api_refuses_the_amount_on_its_field(client, auth, label, value):
    response = client.post(
        "/api/v1/payments",
        data=json.dumps({"amount": value, "currency": "BDT"}),
        content_type="application/json",
        headers=auth,
    )
    assert response.status_code == 422
    answer = response.get_json()
    assert answer["code"] == "VALIDATION_ERROR"
    assert [error["field"] for error in answer["errors"]] == ["amount"]
    assert db.session.execute(db.select(Payment)).first() is None


@pytest.mark.parametrize("number, expected", [("500", "500.00"), ("500.5", "500.50")])
def test_a_json_number_is_still_an_amount(client, auth, number, expected):
    response = client.post(
        "/api/v1/payments",
        data='{"amount": ' + number + ', "currency": "BDT"}',
        content_type="application/json",
        headers=auth,
    )
    assert response.status_code == 201, response.get_json()
    assert db.session.execute(db.select(Payment.amount)).scalar_one() == Decimal(expected)
