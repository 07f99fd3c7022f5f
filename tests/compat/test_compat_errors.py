"""Bad input on a dialect's path gets that dialect's own refusal: shape and status, never ours,
never a 500.
"""

import pytest

from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.compat.conftest import P2_HEADER, P3_HEADER, U_HEADER

U_BODY = {
    "full_name": "A",
    "email": "a@example.com",
    "amount": "10",
    "metadata": {"invoiceid": "1"},
    "redirect_url": "https://shop.example/ok",
    "cancel_url": "https://shop.example/no",
}
P2_BODY = {
    "full_name": "A",
    "email_mobile": "01711111111",
    "amount": "10",
    "metadata": {"invoiceid": "1"},
    "redirect_url": "https://shop.example/ok",
    "cancel_url": "https://shop.example/no",
    "webhook_url": "https://shop.example/ipn",
    "return_type": "GET",
    "currency": "BDT",
}
P3_BODY = {
    "full_name": "A",
    "email_address": "a@example.com",
    "amount": "10",
    "currency": "BDT",
    "metadata": {"invoiceid": "1"},
}


def refusal(dialect, response):
    """(status, message or code) of a refusal, checked to be in the dialect's shape and not ours."""
    body = response.get_json()
    assert response.status_code != 500
    assert "success" not in body and "errors" not in body, body
    if dialect == "piprapay3":
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
        return response.status_code, body["error"]["code"]
    assert set(body) == {"status", "message"} and body["status"] is False, body
    return response.status_code, body["message"]


@pytest.fixture
def keys(compat_key):
    return {name: compat_key(name) for name in ("uddoktapay", "piprapay2", "piprapay3")}


def test_missing_fields_are_named_in_each_dialect(client, keys):
    u = client.post(
        "/api/checkout-v2", json={"full_name": "A"}, headers={U_HEADER: keys["uddoktapay"]}
    )
    assert refusal("uddoktapay", u) == (
        400,
        "Missing required field(s): email, amount, metadata, redirect_url, cancel_url",
    )
    p2 = client.post(
        "/api/create-charge", json={"amount": "5"}, headers={P2_HEADER: keys["piprapay2"]}
    )
    assert refusal("piprapay2", p2) == (
        400,
        "Missing required field(s): full_name, email_mobile, redirect_url, cancel_url, webhook_url",
    )
    p3 = client.post(
        "/api/checkout/redirect", json={"amount": "5"}, headers={P3_HEADER: keys["piprapay3"]}
    )
    assert refusal("piprapay3", p3) == (400, "MISSING_FIELD")
    assert "full_name" in p3.get_json()["error"]["message"]
    assert db.session.execute(db.select(db.func.count()).select_from(Payment)).scalar_one() == 0


CREATES = [
    ("uddoktapay", "/api/checkout-v2", U_HEADER, U_BODY),
    ("piprapay2", "/api/create-charge", P2_HEADER, P2_BODY),
    ("piprapay3", "/api/checkout/redirect", P3_HEADER, P3_BODY),
]
WRONG_KEY = {
    "uddoktapay": (401, "Invalid API key."),
    "piprapay2": (400, "Unauthorized request. Invalid API key."),
    "piprapay3": (400, "INVALID_API_KEY"),
}


@pytest.mark.parametrize("dialect, path, header, body", CREATES)
def test_a_wrong_absent_native_or_other_dialect_key_is_refused(
    client, keys, auth, dialect, path, header, body
):
    native = auth["Authorization"].split(" ", 1)[1]
    other = keys["piprapay3" if dialect != "piprapay3" else "piprapay2"]
    for headers in (
        {header: "nope"},
        {},
        {header: native},
        {"Authorization": auth["Authorization"]},
        {header: other},
    ):
        assert refusal(dialect, client.post(path, json=body, headers=headers)) == WRONG_KEY[dialect]
    assert db.session.execute(db.select(db.func.count()).select_from(Payment)).scalar_one() == 0


@pytest.mark.parametrize("dialect, path, header, body", CREATES)
@pytest.mark.parametrize("amount", ["12.345", "abc", -5, 0, True, "1e3", "", None, {"a": 1}])
def test_a_malformed_amount_is_refused(client, keys, dialect, path, header, body, amount):
    response = client.post(path, json={**body, "amount": amount}, headers={header: keys[dialect]})
    status, said = refusal(dialect, response)
    assert status == 400
    if dialect == "piprapay3":
        assert said in ("INVALID_AMOUNT", "MISSING_FIELD")
    else:
        assert "amount" in said


@pytest.mark.parametrize(
    "change, code",
    [
        ({"email_address": "not-an-address"}, "INVALID_EMAIL"),
        ({"currency": "XYZ"}, "INVALID_CURRENCY"),
        ({"return_url": "javascript:alert(1)"}, "INVALID_URL"),
        ({"webhook_url": "ftp://x"}, "INVALID_URL"),
        ({"metadata": "{not json"}, "INVALID_METADATA"),
        ({"metadata": [1, 2]}, "INVALID_METADATA"),
    ],
)
def test_p3_names_what_is_wrong_with_a_code(client, keys, change, code):
    response = client.post(
        "/api/checkout/redirect", json={**P3_BODY, **change}, headers={P3_HEADER: keys["piprapay3"]}
    )
    assert refusal("piprapay3", response) == (400, code)


@pytest.mark.parametrize("dialect, path, header, body", CREATES)
def test_a_body_that_is_not_a_json_object_is_refused(client, keys, dialect, path, header, body):
    for data in ("{broken", "[1, 2]", '"text"'):
        response = client.post(
            path, data=data, content_type="application/json", headers={header: keys[dialect]}
        )
        status, said = refusal(dialect, response)
        assert status == 400
        assert said == "INVALID_JSON_PAYLOAD" if dialect == "piprapay3" else "JSON" in said


@pytest.mark.parametrize("dialect, path, header, body", CREATES)
def test_a_get_on_a_dialect_path_is_refused_in_the_dialect(
    client, keys, dialect, path, header, body
):
    status, _ = refusal(dialect, client.get(path, headers={header: keys[dialect]}))
    assert status == 400


def test_unknown_ids_are_refused_in_each_dialect(client, keys):
    u = client.post(
        "/api/verify-payment", json={"invoice_id": "NOPE"}, headers={U_HEADER: keys["uddoktapay"]}
    )
    assert refusal("uddoktapay", u)[0] == 404
    p2 = client.post(
        "/api/verify-payments", json={"pp_id": 123}, headers={P2_HEADER: keys["piprapay2"]}
    )
    assert refusal("piprapay2", p2) == (400, "Invalid Transaction")
    p3 = client.post(
        "/api/verify-payment", json={"pp_id": "123"}, headers={P3_HEADER: keys["piprapay3"]}
    )
    assert refusal("piprapay3", p3) == (400, "INVALID_PP_ID")
    p3_refund = client.post(
        "/api/refund-payment", json={"pp_id": "9"}, headers={P3_HEADER: keys["piprapay3"]}
    )
    assert refusal("piprapay3", p3_refund) == (400, "INVALID_PP_ID")
    u_refund = client.post(
        "/api/refund-payment",
        json={"transaction_id": "NOPE"},
        headers={U_HEADER: keys["uddoktapay"]},
    )
    assert refusal("uddoktapay", u_refund)[0] == 404


def test_p2_calls_a_payment_not_yet_started_an_invalid_transaction(client, keys):
    created = client.post(
        "/api/create-charge", json=P2_BODY, headers={P2_HEADER: keys["piprapay2"]}
    )
    pp_id = created.get_json()["pp_id"]
    verify = client.post(
        "/api/verify-payments", json={"pp_id": pp_id}, headers={P2_HEADER: keys["piprapay2"]}
    )
    assert refusal("piprapay2", verify) == (400, "Invalid Transaction")


def test_a_refund_of_an_unpaid_payment_is_refused_in_each_dialect(client, keys):
    u = client.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: keys["uddoktapay"]})
    assert u.status_code == 200
    invoice = db.session.execute(db.select(CompatPayment.external_id)).scalar_one()
    u_refund = client.post(
        "/api/refund-payment",
        json={"invoice_id": invoice, "amount": "5"},
        headers={U_HEADER: keys["uddoktapay"]},
    )
    assert refusal("uddoktapay", u_refund)[0] == 400
    p3 = client.post("/api/checkout/redirect", json=P3_BODY, headers={P3_HEADER: keys["piprapay3"]})
    p3_refund = client.post(
        "/api/refund-payment",
        json={"pp_id": p3.get_json()["pp_id"]},
        headers={P3_HEADER: keys["piprapay3"]},
    )
    assert refusal("piprapay3", p3_refund) == (400, "REFUND_FAILED")
    statuses = db.session.execute(db.select(Payment.status)).scalars().all()
    assert statuses == ["created", "created"]


def test_the_shared_paths_answer_in_the_shape_of_the_header_sent(client, keys):
    """verify-payment and refund-payment serve U and P3: the key's dialect decides, not the path."""
    as_p3 = client.post(
        "/api/verify-payment", json={"pp_id": "1"}, headers={P3_HEADER: keys["uddoktapay"]}
    )
    assert refusal("piprapay3", as_p3) == (400, "INVALID_API_KEY")
    as_u = client.post(
        "/api/verify-payment", json={"invoice_id": "1"}, headers={U_HEADER: keys["piprapay3"]}
    )
    assert refusal("uddoktapay", as_u) == (401, "Invalid API key.")
    p2_on_p3 = client.post(
        "/api/verify-payment", json={"pp_id": "1"}, headers={P2_HEADER: keys["piprapay2"]}
    )
    assert refusal("piprapay3", p2_on_p3) == (400, "INVALID_API_KEY")


ODD_VALUES = [
    None,
    "",
    0,
    -1,
    1.5,
    True,
    [],
    [1, "x"],
    {},
    {"a": {"b": None}},
    "x" * 5000,
    "9" * 60,
]
PATHS = [
    ("uddoktapay", "/api/checkout-v2/global", U_HEADER),
    ("uddoktapay", "/api/checkout", U_HEADER),
    ("uddoktapay", "/api/verify-payment", U_HEADER),
    ("uddoktapay", "/api/refund-payment", U_HEADER),
    ("piprapay2", "/api/create-charge", P2_HEADER),
    ("piprapay2", "/api/verify-payments", P2_HEADER),
    ("piprapay3", "/api/checkout/popup", P3_HEADER),
    ("piprapay3", "/api/verify-payment", P3_HEADER),
    ("piprapay3", "/api/refund-payment", P3_HEADER),
]
FIELDS = sorted(
    set(U_BODY) | set(P2_BODY) | set(P3_BODY) | {"invoice_id", "pp_id", "transaction_id", "amount"}
)


@pytest.mark.parametrize("dialect, path, header", PATHS)
def test_odd_values_in_any_field_get_a_refusal_in_the_dialect_never_a_500(
    client, keys, dialect, path, header
):
    base = {"uddoktapay": U_BODY, "piprapay2": P2_BODY, "piprapay3": P3_BODY}[dialect]
    for field in FIELDS:
        for value in ODD_VALUES:
            response = client.post(
                path, json={**base, field: value}, headers={header: keys[dialect]}
            )
            assert response.status_code in (200, 400, 401, 404), (field, value)
            body = response.get_json()
            assert "success" not in body, (field, value, body)
            if response.status_code != 200:
                refusal(dialect, response)


@pytest.mark.parametrize("dialect, path, header, body", CREATES)
@pytest.mark.parametrize(
    "url",
    [
        "http://localhost./ipn",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://127.0.0.1.nip.io/ipn",
    ],
)
def test_a_webhook_url_private_by_its_name_is_refused_in_each_dialect(
    app, monkeypatch, client, keys, dialect, path, header, body, url
):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    response = client.post(path, json={**body, "webhook_url": url}, headers={header: keys[dialect]})
    status, said = refusal(dialect, response)
    assert status == 400
    assert said == "INVALID_URL" if dialect == "piprapay3" else said.startswith("webhook_url:")
    assert db.session.execute(db.select(db.func.count()).select_from(Payment)).scalar_one() == 0
