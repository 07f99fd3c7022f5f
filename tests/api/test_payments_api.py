"""POST/GET /payments and cancel: the shapes of docs/spec/merchant-api.md 2.3/2.4 and
docs/spec/CONTRACT.md, filters, isolation, bad input.
"""

import re
import uuid
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment
from tests.factories import PaymentFactory, completed_payment

URL = "/api/v1/payments"
JSON = "application/json"
GOOD = {
    "amount": "500.00",
    "currency": "BDT",
    "reference": "ORDER-1",
    "callback_url": "https://shop.example/hook",
    "redirect_url": "https://shop.example/thanks",
    "cancel_url": "https://shop.example/cart",
    "customer_name": "Rahim Uddin",
    "customer_mail": "rahim@example.com",
    "customer_phone": "+8801712345678",
}
READ_FIELDS = {
    "payment_id",
    "token",
    "checkout_url",
    "status",
    "trx_id",
    "reference",
    "amount",
    "amount_refunded",
    "currency",
    "provider",
    "provider_trx_id",
    "created_at",
    "completed_at",
    "expires_at",
    "customer",
    "metadata",
}


def rows():
    """(payments, customers) as committed."""
    db.session.expire_all()
    count = db.func.count()
    return (
        db.session.scalar(db.select(count).select_from(Payment)),
        db.session.scalar(db.select(count).select_from(Customer)),
    )


def create(client, auth, **changes):
    body = {key: value for key, value in {**GOOD, **changes}.items() if value is not None}
    return client.post(URL, json=body, headers=auth)


def test_create_payment_answers_201_with_the_initiation_fields(client, app, auth):
    response = create(client, auth)

    assert response.status_code == 201
    assert response.json["success"] is True
    data = response.json["data"]
    assert list(data) == ["payment_id", "token", "checkout_url", "status", "livemode"]
    assert data["status"] == "created"
    assert uuid.UUID(data["payment_id"]).version == 4
    assert str(uuid.UUID(data["payment_id"])) == data["payment_id"]
    assert data["checkout_url"] == f"{app.config['BASE_URL']}/checkout/{data['token']}"
    assert data["checkout_url"].rsplit("/", 1)[1] == data["token"]
    assert re.fullmatch(r"[A-Za-z0-9_-]+", data["token"]) and len(data["token"]) * 6 >= 128
    assert rows() == (1, 1)


def test_tokens_and_ids_differ_between_payments(client, auth):
    created = [create(client, auth, reference=f"R{n}").json["data"] for n in range(5)]

    assert len({item["token"] for item in created}) == 5
    assert len({item["payment_id"] for item in created}) == 5


def test_only_amount_and_currency_are_required(client, auth):
    response = client.post(URL, json={"amount": "1", "currency": "BDT"}, headers=auth)

    assert response.status_code == 201
    assert rows() == (1, 0)  # no customer details: no profile


def test_read_payment_answers_200_with_every_documented_field(client, auth):
    payment_id = create(
        client, auth, metadata={"order": "A-1", "items": 3, "gift": True, "note": None}
    ).json["data"]["payment_id"]

    response = client.get(f"{URL}/{payment_id}", headers=auth)

    assert response.status_code == 200
    data = response.json["data"]
    assert READ_FIELDS <= set(data)
    assert (
        data["payment_id"],
        data["status"],
        data["amount"],
        data["amount_refunded"],
        data["currency"],
    ) == (payment_id, "created", "500.00", "0.00", "BDT")
    assert (data["trx_id"], data["completed_at"], data["provider"], data["provider_trx_id"]) == (
        None,
        None,
        None,
        None,
    )
    assert data["reference"] == "ORDER-1"
    assert data["customer"] == {
        "name": "Rahim Uddin",
        "email": "rahim@example.com",
        "phone": "+8801712345678",
    }
    assert data["metadata"] == {"order": "A-1", "items": 3, "gift": True, "note": None}
    created_at = datetime.fromisoformat(data["created_at"])
    assert created_at.utcoffset() == timedelta(0)
    assert datetime.fromisoformat(data["expires_at"]) > created_at


def test_read_completed_payment_shows_its_trx_id(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("750.5"))

    data = client.get(f"{URL}/{payment.public_id}", headers=auth).json["data"]

    assert data["status"] == "completed"
    assert re.fullmatch(r"TRX[A-Z2-7]{12}", data["trx_id"])
    assert data["amount"] == "750.50"
    assert data["provider"] == "bkash" and data["provider_trx_id"].startswith("BK")
    assert data["completed_at"] is not None


@pytest.mark.parametrize(
    "payment_id", ["00000000-0000-4000-8000-000000000000", "nope", "1", "%00", "x" * 300]
)
def test_unknown_payment_is_404_payment_not_found(client, auth, payment_id):
    response = client.get(f"{URL}/{payment_id}", headers=auth)

    assert response.status_code == 404
    assert response.json["code"] in (
        {"PAYMENT_NOT_FOUND"} if payment_id != "%00" else {"PAYMENT_NOT_FOUND", "NOT_FOUND"}
    )


def test_another_brands_payment_reads_as_404(client, auth, other_brand):
    theirs = PaymentFactory(brand=other_brand)

    assert client.get(f"{URL}/{theirs.public_id}", headers=auth).json["code"] == "PAYMENT_NOT_FOUND"
    assert (
        client.post(f"{URL}/{theirs.public_id}/cancel", headers=auth).json["code"]
        == "PAYMENT_NOT_FOUND"
    )
    assert client.get(f"{URL}?reference={theirs.reference}", headers=auth).json["data"] == []
    db.session.expire_all()
    assert db.session.get(Payment, theirs.id).status == "created"


def test_list_payments_newest_first_with_pagination_meta(client, auth, brand):
    base = datetime(2030, 1, 1, tzinfo=timezone.utc)
    made = [PaymentFactory(brand=brand, created_at=base + timedelta(hours=n)) for n in range(5)]

    first = client.get(f"{URL}?per_page=2", headers=auth)
    last = client.get(f"{URL}?per_page=2&page=3", headers=auth)
    beyond = client.get(f"{URL}?per_page=2&page=4", headers=auth)

    assert first.status_code == 200
    assert first.json["meta"] == {"page": 1, "per_page": 2, "total": 5, "total_pages": 3}
    assert [item["payment_id"] for item in first.json["data"]] == [
        made[4].public_id,
        made[3].public_id,
    ]
    assert [item["payment_id"] for item in last.json["data"]] == [made[0].public_id]
    assert beyond.json["data"] == [] and beyond.json["meta"]["total"] == 5
    assert client.get(URL, headers=auth).json["meta"]["per_page"] == 25
    assert READ_FIELDS <= set(first.json["data"][0])


def test_reading_a_payment_back_is_one_query_the_key_with_the_payment(
    client, auth, brand, sql_statements
):
    payment = completed_payment(brand=brand)
    url, trx_id = f"/api/v1/payments/{payment.public_id}", payment.transaction.trx_id
    client.get(url, headers=auth)  # the key's first use records last_used_at
    sql_statements.clear()

    response = client.get(url, headers=auth)

    assert len(sql_statements) == 1, sql_statements
    assert response.status_code == 200 and response.get_json()["data"]["trx_id"] == trx_id


def test_a_page_of_payments_is_read_in_one_query_whatever_its_size(
    client, auth, brand, sql_statements
):
    for number in range(30):
        (completed_payment if number % 2 else PaymentFactory)(brand=brand)
    client.get("/api/v1/payments", headers=auth)
    sql_statements.clear()

    response = client.get("/api/v1/payments?per_page=25", headers=auth)

    assert len(response.get_json()["data"]) == 25
    assert sum(1 for item in response.get_json()["data"] if item["trx_id"]) >= 12
    assert len(sql_statements) == 3, sql_statements  # the key, the count, the page


def test_list_payments_filters_by_status_reference_and_dates(client, auth, brand):
    day = datetime(2030, 3, 10, 12, tzinfo=timezone.utc)
    PaymentFactory(brand=brand, reference="EARLY", created_at=day - timedelta(days=2))
    completed_payment(brand=brand, reference="MIDDLE", created_at=day)
    PaymentFactory(brand=brand, reference="LATE", created_at=day + timedelta(days=2))

    def refs(query):
        response = client.get(f"{URL}?{query}", headers=auth)
        assert response.status_code == 200, response.json
        return [item["reference"] for item in response.json["data"]]

    assert refs("status=completed") == ["MIDDLE"]
    assert refs("status=created") == ["LATE", "EARLY"]
    assert refs("status=refunded") == []
    assert refs("reference=LATE") == ["LATE"]
    assert refs("from=2030-03-09T00:00:00Z") == ["LATE", "MIDDLE"]
    assert refs("to=2030-03-11T00:00:00Z") == ["MIDDLE", "EARLY"]
    assert refs("from=2030-03-09T00:00:00%2B06:00&to=2030-03-11T00:00:00Z&status=completed") == [
        "MIDDLE"
    ]
    assert refs("from=2030-03-10T12:00:00Z&to=2030-03-10T12:00:00Z") == [
        "MIDDLE"
    ]  # both ends included


def test_cancel_an_open_payment(client, auth):
    payment_id = create(client, auth).json["data"]["payment_id"]

    response = client.post(f"{URL}/{payment_id}/cancel", headers=auth)

    assert response.status_code == 200
    assert response.json["data"]["status"] == "cancelled"
    assert client.get(f"{URL}/{payment_id}", headers=auth).json["data"]["status"] == "cancelled"
    again = client.post(f"{URL}/{payment_id}/cancel", headers=auth)
    assert (again.status_code, again.json["code"]) == (409, "INVALID_STATE")


def test_cancel_a_processing_payment(client, auth, brand):
    payment = PaymentFactory(brand=brand, status="processing")

    assert (
        client.post(f"{URL}/{payment.public_id}/cancel", headers=auth).json["data"]["status"]
        == "cancelled"
    )


@pytest.mark.parametrize("status", ["completed", "expired", "failed", "cancelled"])
def test_cancel_a_closed_payment_is_409_invalid_state(client, auth, brand, status):
    payment = (
        completed_payment(brand=brand)
        if status == "completed"
        else PaymentFactory(brand=brand, status=status)
    )

    response = client.post(f"{URL}/{payment.public_id}/cancel", headers=auth)

    assert (response.status_code, response.json["code"]) == (409, "INVALID_STATE")
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == status


def test_cancel_unknown_payment_is_404(client, auth):
    response = client.post(f"{URL}/{uuid.uuid4()}/cancel", headers=auth)

    assert (response.status_code, response.json["code"]) == (404, "PAYMENT_NOT_FOUND")


def test_the_same_customer_email_twice_makes_one_profile(client, auth):
    first = create(client, auth, customer_mail="Same@Example.com").json["data"]["payment_id"]
    second = create(
        client, auth, customer_mail="same@example.com", customer_phone=None, customer_name=None
    ).json["data"]["payment_id"]

    assert rows() == (2, 1)
    customer = db.session.execute(db.select(Customer)).scalar_one()
    assert (customer.email, customer.name, customer.phone) == (
        "same@example.com",
        "Rahim Uddin",
        "+8801712345678",
    )
    linked = db.session.execute(
        db.select(Payment.customer_id).where(Payment.public_id.in_([first, second]))
    )
    assert set(linked.scalars()) == {customer.id}


def test_customer_email_is_accepted_for_customer_mail(client, auth):
    body = {"amount": "10.00", "currency": "BDT", "customer_email": "alias@example.com"}

    payment_id = client.post(URL, json=body, headers=auth).json["data"]["payment_id"]

    assert (
        client.get(f"{URL}/{payment_id}", headers=auth).json["data"]["customer"]["email"]
        == "alias@example.com"
    )
    assert db.session.execute(db.select(Customer.email)).scalar_one() == "alias@example.com"


@pytest.mark.parametrize(
    "amount, shown",
    [
        (500, "500.00"),
        (12.5, "12.50"),
        (0.01, "0.01"),
        ("7", "7.00"),
        ("7.5", "7.50"),
        ("1000000.00", "1000000.00"),
    ],
)
def test_amounts_are_accepted_as_strings_or_json_numbers(client, auth, amount, shown):
    payment_id = create(client, auth, amount=amount).json["data"]["payment_id"]

    assert client.get(f"{URL}/{payment_id}", headers=auth).json["data"]["amount"] == shown


def test_lower_case_currency_is_accepted(client, auth):
    response = create(client, auth, currency="usd")

    assert response.status_code == 201
    assert (
        client.get(f"{URL}/{response.json['data']['payment_id']}", headers=auth).json["data"][
            "currency"
        ]
        == "USD"
    )


def test_unknown_fields_are_ignored(client, auth):
    assert create(client, auth, surprise="ignored", status="completed").status_code == 201
    assert db.session.execute(db.select(Payment.status)).scalar_one() == "created"


def test_metadata_of_twenty_keys_round_trips_and_twenty_one_is_refused(client, auth):
    twenty = {f"k{n}": n for n in range(20)}
    payment_id = create(client, auth, metadata=twenty).json["data"]["payment_id"]
    assert client.get(f"{URL}/{payment_id}", headers=auth).json["data"]["metadata"] == twenty

    response = create(client, auth, metadata={f"k{n}": n for n in range(21)})

    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == "metadata"
    assert rows()[0] == 1


def over_max(app):
    return str(Decimal(app.config["MAX_AMOUNT"]) + Decimal("0.01"))


def good_with(**raw):
    """The good body as JSON text, with some fields replaced by raw JSON fragments."""
    import json

    parts = [f'"{key}": {json.dumps(value)}' for key, value in GOOD.items() if key not in raw]
    parts += [f'"{key}": {fragment}' for key, fragment in raw.items() if fragment is not None]
    return "{" + ", ".join(parts) + "}"


# (id, raw body, content type, status, code, field at fault)
BAD_BODIES = (
    [
        ("no body", None, None, 422, "VALIDATION_ERROR", "amount"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "currency"),
        ("invalid json", '{"amount": "5.00", ', JSON, 400, "INVALID_JSON", None),
        ("single quotes", "{'amount': '5.00'}", JSON, 400, "INVALID_JSON", None),
        (
            "form encoded",
            "amount=5.00&currency=BDT",
            "application/x-www-form-urlencoded",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        (
            "json as text",
            '{"amount": "5.00", "currency": "BDT"}',
            "text/plain",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        ("array", '[{"amount": "5.00", "currency": "BDT"}]', JSON, 422, "VALIDATION_ERROR", "body"),
        ("string", '"5.00"', JSON, 422, "VALIDATION_ERROR", "body"),
        ("number", "5", JSON, 422, "VALIDATION_ERROR", "body"),
        (
            "body over 1 MB",
            good_with(customer_name='"' + "n" * (1024 * 1024) + '"'),
            JSON,
            413,
            "PAYLOAD_TOO_LARGE",
            None,
        ),
    ]
    + [
        (f"amount {label}", good_with(amount=raw), JSON, 422, "VALIDATION_ERROR", "amount")
        for label, raw in [
            ("missing", None),
            ("-1", '"-1"'),
            ("-1 number", "-1"),
            ("0", '"0"'),
            ("0.00", '"0.00"'),
            ("0 number", "0"),
            ("1.001", '"1.001"'),
            ("1.001 number", "1.001"),
            ("1e3", '"1e3"'),
            ("NaN", '"NaN"'),
            ("NaN literal", "NaN"),
            ("Infinity", '"Infinity"'),
            ("Infinity literal", "Infinity"),
            ("1e400", "1e400"),
            ("huge string", '"' + "9" * 40 + '"'),
            ("huge number", "1" + "0" * 40),
            ("above MAX_AMOUNT", '"1000000.01"'),
            ("empty", '""'),
            ("blank", '" "'),
            ("comma", '"1,00"'),
            ("words", '"ten"'),
            ("true", "true"),
            ("null", "null"),
            ("array", '["5.00"]'),
            ("object", '{"value": "5.00"}'),
            ("plus sign", '"+5.00"'),
            ("hex", '"0x10"'),
            ("leading dot", '".5"'),
            ("trailing dot", '"5."'),
            ("thousands", '"1 000"'),
        ]
    ]
    + [
        (f"currency {label}", good_with(currency=raw), JSON, 422, "VALIDATION_ERROR", "currency")
        for label, raw in [
            ("missing", None),
            ("unknown", '"XXX"'),
            ("not the brand's", '"EUR"'),
            ("two letters", '"BD"'),
            ("four letters", '"BDTT"'),
            ("digits", '"123"'),
            ("number", "123"),
            ("null", "null"),
            ("empty", '""'),
            ("symbol", '"\u09f3"'),
            ("padded", '" BDT "'),
        ]
    ]
    + [
        (f"{field} {label}", good_with(**{field: raw}), JSON, 422, "VALIDATION_ERROR", field)
        for field in ("callback_url", "redirect_url", "cancel_url")
        for label, raw in [
            ("ftp", '"ftp://shop.example/hook"'),
            ("relative", '"/thanks"'),
            ("javascript", '"javascript:alert(1)"'),
            ("data", '"data:text/html,hi"'),
            ("no scheme", '"shop.example/hook"'),
            ("words", '"not a url"'),
            ("too long", '"https://shop.example/' + "a" * 2048 + '"'),
            ("number", "42"),
            ("empty", '""'),
            ("spaces", '"https://shop example/"'),
        ]
    ]
    + [
        (f"{field} {label}", good_with(**{field: raw}), JSON, 422, "VALIDATION_ERROR", field)
        for field, label, raw in [
            ("customer_mail", "no at", '"rahim.example.com"'),
            ("customer_mail", "no domain", '"rahim@"'),
            ("customer_mail", "no user", '"@example.com"'),
            ("customer_mail", "space", '"ra him@example.com"'),
            ("customer_mail", "number", "42"),
            ("customer_mail", "huge", '"' + "a" * 300 + '@example.com"'),
            ("customer_phone", "short", '"123"'),
            ("customer_phone", "letters", '"+880ABCDEFGHIJ"'),
            ("customer_phone", "number", "8801712345678"),
            ("customer_phone", "unknown country", '"+9991234567"'),
            ("customer_phone", "too long", '"+88017123456789012345"'),
            ("customer_phone", "empty", '""'),
            ("customer_name", "too long", '"' + "n" * 201 + '"'),
            ("customer_name", "huge", '"' + "n" * 100_000 + '"'),
            ("customer_name", "number", "7"),
            ("customer_name", "lone surrogate", '"\\ud800"'),
            ("reference", "empty", '""'),
            ("reference", "too long", '"' + "r" * 256 + '"'),
            ("reference", "number", "12345"),
            ("reference", "object", '{"id": 1}'),
            ("reference", "nul", '"A\\u0000B"'),
            ("metadata", "string", '"text"'),
            ("metadata", "list", "[1, 2]"),
            ("metadata", "nested", '{"a": {"b": 1}}'),
            ("metadata", "long value", '{"a": "' + "v" * 501 + '"}'),
            ("metadata", "NaN value", '{"a": NaN}'),
            ("metadata", "Infinity value", '{"a": Infinity}'),
            ("metadata", "nul value", '{"a": "\\u0000"}'),
            ("metadata", "long key", '{"' + "k" * 41 + '": 1}'),
            ("metadata", "empty key", '{"": 1}'),
            ("metadata", "21 keys", "{" + ", ".join(f'"k{n}": {n}' for n in range(21)) + "}"),
        ]
    ]
    + [
        (
            "customer_email alias bad",
            good_with(customer_mail=None, customer_email='"nope"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "customer_mail",
        ),
    ]
)


@pytest.mark.parametrize(
    "body, content_type, status, code, field",
    [case[1:] for case in BAD_BODIES],
    ids=[case[0] for case in BAD_BODIES],
)
def test_bad_payment_bodies_are_refused_in_the_envelope_and_write_nothing(
    client, auth, body, content_type, status, code, field
):
    kwargs = {"data": body} if body is not None else {}
    if content_type:
        kwargs["content_type"] = content_type

    response = client.post(URL, headers=auth, **kwargs)

    assert response.status_code == status, response.get_data(as_text=True)[:500]
    assert response.json["success"] is False and response.json["error"] is True
    assert response.json["code"] == code
    if field:
        assert any(
            error["field"] == field or error["field"].startswith(field + ".")
            for error in response.json["errors"]
        ), response.json
    assert rows() == (0, 0)


def test_the_maximum_amount_follows_max_amount(client, app, auth, monkeypatch):
    monkeypatch.setitem(app.config, "MAX_AMOUNT", "100.00")

    assert create(client, auth, amount="100.00").status_code == 201
    refused = create(client, auth, amount=over_max(app))
    assert (refused.status_code, refused.json["errors"][0]["field"]) == (422, "amount")


BAD_QUERIES = [
    ("page=0", "page"),
    ("page=-1", "page"),
    ("page=abc", "page"),
    ("page=1.5", "page"),
    ("page=", "page"),
    ("page=99999999999999999999", "page"),
    ("per_page=0", "per_page"),
    ("per_page=101", "per_page"),
    ("per_page=ten", "per_page"),
    ("status=bogus", "status"),
    ("status=COMPLETED", "status"),
    ("status=", "status"),
    ("from=yesterday", "from"),
    ("from=2030-13-01T00:00:00Z", "from"),
    ("to=2030-02-30", "to"),
    ("to=1700000000", "to"),
    ("reference=" + "r" * 256, "reference"),
    ("reference=%00", "reference"),
]


@pytest.mark.parametrize("query, field", BAD_QUERIES, ids=[case[0][:40] for case in BAD_QUERIES])
def test_bad_list_queries_are_422_naming_the_parameter(client, auth, brand, query, field):
    PaymentFactory(brand=brand)

    response = client.get(f"{URL}?{query}", headers=auth)

    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.json["code"] == "VALIDATION_ERROR"
    assert field in {error["field"] for error in response.json["errors"]}
