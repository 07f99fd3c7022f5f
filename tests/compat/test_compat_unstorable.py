"""A value no column can take (NUL, a lone surrogate, NaN, Infinity) gets the dialect's refusal
naming the field, on every dialect path and in JSON and form bodies alike: never a 500, never a row.
"""

import json

import pytest

from gateway.compat.models.compat import CompatPayment
from gateway.db_types import UNSTORABLE_MESSAGE
from gateway.extensions import db
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment
from tests.compat.conftest import P2_HEADER, P3_HEADER, U_HEADER
from tests.compat.test_compat_errors import (  # noqa: F401 - keys: a fixture
    P2_BODY,
    P3_BODY,
    U_BODY,
    keys,
)

# JSON text json.dumps would not write: an escaped NUL and lone surrogate, non-finite numbers.
NUL, SURROGATE = '"a\\u0000b"', '"a\\ud800b"'
NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400"]
CREATES = {
    "uddoktapay": ("/api/checkout-v2", U_HEADER, U_BODY),
    "piprapay2": ("/api/create-charge", P2_HEADER, P2_BODY),
    "piprapay3": ("/api/checkout/redirect", P3_HEADER, P3_BODY),
}
CREATE_CASES = [
    *(
        (dialect, field, raw)
        for dialect, fields in {
            "uddoktapay": ("full_name", "email", "redirect_url", "webhook_url"),
            "piprapay2": ("full_name", "email_mobile", "webhook_url"),
            "piprapay3": ("full_name", "email_address", "return_url"),
        }.items()
        for field in fields
        for raw in (NUL, SURROGATE)
    ),
    *(("uddoktapay", "amount", raw) for raw in NON_FINITE),
    ("uddoktapay", "metadata", '{"invoiceid": "1\\u0000"}'),
    ("uddoktapay", "metadata", '{"note": NaN}'),
    ("piprapay2", "metadata", '{"note": 1e400}'),
    ("piprapay3", "metadata", '{"a": {"b": ["x", "\\udc00"]}}'),
    ("piprapay3", "metadata", '{"a\\u0000": 1}'),
    ("uddoktapay", "extra", "Infinity"),  # a field no dialect reads is refused all the same
]


def raw_json(body, field, raw):
    """The JSON text of `body` with `field` set to the JSON text `raw`."""
    return json.dumps({**body, field: "@@"}).replace('"@@"', raw)


def rows():
    """How many payments, customers and dialect rows there are."""
    db.session.expire_all()
    return [
        db.session.execute(db.select(db.func.count()).select_from(model)).scalar_one()
        for model in (Payment, Customer, CompatPayment)
    ]


def assert_refused(dialect, response, field, code="INVALID_REQUEST"):
    """A 400 in the dialect's own shape whose message names `field`."""
    message = f"{field}: {UNSTORABLE_MESSAGE}"
    expected = (
        {"error": {"code": code, "message": message}}
        if dialect == "piprapay3"
        else {"status": False, "message": message}
    )
    assert (response.status_code, response.get_json()) == (400, expected)


@pytest.mark.parametrize("dialect, field, raw", CREATE_CASES)
def test_an_unstorable_json_value_is_refused_on_create_without_a_row(
    client, keys, dialect, field, raw
):
    path, header, body = CREATES[dialect]
    response = client.post(
        path,
        data=raw_json(body, field, raw),
        content_type="application/json",
        headers={header: keys[dialect]},
    )
    assert_refused(dialect, response, field)
    assert rows() == [0, 0, 0]


@pytest.mark.parametrize("dialect", sorted(CREATES))
@pytest.mark.parametrize(
    "field, value",
    [("full_name", "a\x00b"), ("metadata", '{"note": NaN}'), ("metadata", '{"x": "\\u0000"}')],
)
def test_an_unstorable_form_value_is_refused_on_create_without_a_row(
    client, keys, dialect, field, value
):
    path, header, body = CREATES[dialect]
    form = {**body, "metadata": json.dumps(body["metadata"]), field: value}
    response = client.post(path, data=form, headers={header: keys[dialect]})
    code = "INVALID_METADATA" if field == "metadata" else "INVALID_REQUEST"
    assert_refused(dialect, response, field, code)
    assert rows() == [0, 0, 0]


def test_metadata_sent_as_a_json_string_is_checked_once_decoded(client, keys):
    path, header, body = CREATES["piprapay3"]
    response = client.post(
        path,
        json={**body, "metadata": '{"invoiceid": "1\\u0000", "n": Infinity}'},
        headers={header: keys["piprapay3"]},
    )
    assert_refused("piprapay3", response, "metadata", "INVALID_METADATA")
    assert rows() == [0, 0, 0]


LOOKUPS = [
    ("uddoktapay", "/api/verify-payment", U_HEADER, "invoice_id"),
    ("uddoktapay", "/api/refund-payment", U_HEADER, "transaction_id"),
    ("uddoktapay", "/api/refund-payment", U_HEADER, "invoice_id"),
    ("piprapay2", "/api/verify-payments", P2_HEADER, "pp_id"),
    ("piprapay3", "/api/verify-payment", P3_HEADER, "pp_id"),
    ("piprapay3", "/api/refund-payment", P3_HEADER, "pp_id"),
]


@pytest.mark.parametrize("dialect, path, header, field", LOOKUPS)
@pytest.mark.parametrize("raw", [NUL, SURROGATE, "NaN"])
def test_an_unstorable_id_is_refused_on_verify_and_refund(
    client, keys, dialect, path, header, field, raw
):
    response = client.post(
        path,
        data=raw_json({}, field, raw),
        content_type="application/json",
        headers={header: keys[dialect]},
    )
    assert_refused(dialect, response, field)


@pytest.mark.parametrize("dialect, path, header, field", LOOKUPS[:1] + LOOKUPS[3:4])
def test_an_unstorable_form_id_is_refused_on_verify(client, keys, dialect, path, header, field):
    response = client.post(path, data={field: "1\x00"}, headers={header: keys[dialect]})
    assert_refused(dialect, response, field)


@pytest.mark.parametrize("token", ["no-such-token", "%00", "a%00b"])
def test_an_unknown_return_token_gets_the_browser_its_not_found_page(client, token):
    response = client.get(f"/compat/return/{token}", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert response.mimetype == "text/html"


def test_a_field_whose_name_is_unstorable_is_named_escaped(client, keys):
    path, header, body = CREATES["piprapay2"]
    response = client.post(path, json={**body, "x\x00": "1"}, headers={header: keys["piprapay2"]})
    assert_refused("piprapay2", response, "x\\x00")
    assert rows() == [0, 0, 0]
