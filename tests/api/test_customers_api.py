"""The /customers API: create, list with filters, read by id/e-mail/phone, change, delete, brand
isolation.
"""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment
from gateway.payments.refunds import create_refund
from tests.bad_input import BAD_EMAILS, BAD_PHONES, JSON, assert_refused, body_cases, raw_body, send
from tests.factories import CustomerFactory, PaymentFactory, completed_payment

URL = "/api/v1/customers"
PROFILE_FIELDS = [
    "id",
    "name",
    "email",
    "phone",
    "created_at",
    "payment_count",
    "total_paid",
    "total_paid_by_currency",
    "livemode",
]


def customer_count():
    return db.session.scalar(db.select(db.func.count()).select_from(Customer))


def fields_at_fault(response):
    return {error["field"] for error in response.json.get("errors", [])}


def test_create_customer_returns_201_with_the_normalised_profile(client, auth):
    response = client.post(
        URL,
        json={"name": "Rahim Uddin", "email": "Rahim@Example.COM", "phone": "01712345678"},
        headers=auth,
    )

    assert response.status_code == 201
    body = response.json
    assert body["success"] is True
    assert list(body["data"]) == PROFILE_FIELDS
    assert body["data"]["email"] == "rahim@example.com"
    assert body["data"]["phone"] == "+8801712345678"
    assert body["data"]["payment_count"] == 0
    assert body["data"]["total_paid"] == "0.00"
    assert body["data"]["total_paid_by_currency"] == {}
    assert db.session.get(Customer, body["data"]["id"]).name == "Rahim Uddin"


@pytest.mark.parametrize("body", [{"phone": "+8801812345678"}, {"email": "only@example.com"}])
def test_create_customer_needs_only_one_way_to_reach_them(client, auth, body):
    assert client.post(URL, json=body, headers=auth).status_code == 201


@pytest.mark.parametrize(
    "body, field",
    [
        ({"name": "No Contact"}, "email"),
        ({}, "email"),
        ({"email": None, "phone": None}, "phone"),
        ({"email": "not-an-address"}, "email"),
        ({"email": "a@" + "b" * 250 + ".com"}, "email"),
        ({"email": 42}, "email"),
        ({"phone": "12345"}, "phone"),
        ({"phone": "+1 555 ABC"}, "phone"),
        ({"phone": 8801712345678}, "phone"),
        ({"email": "x@example.com", "name": "n" * 201}, "name"),
        ({"email": "x@example.com", "name": ["list"]}, "name"),
        ({"email": "x\u0000@example.com"}, "email"),
    ],
)
def test_create_customer_refuses_bad_fields_and_writes_nothing(client, auth, body, field):
    response = client.post(URL, json=body, headers=auth)

    assert response.status_code == 422
    assert response.json["code"] == "VALIDATION_ERROR"
    assert field in fields_at_fault(response)
    assert customer_count() == 0


def test_create_customer_with_an_email_on_file_is_409(client, auth, brand):
    CustomerFactory(brand=brand, email="taken@example.com")

    response = client.post(URL, json={"email": "TAKEN@example.com"}, headers=auth)

    assert response.status_code == 409
    assert response.json["code"] == "CUSTOMER_EXISTS"
    assert fields_at_fault(response) == {"email"}
    assert customer_count() == 1


def test_the_same_email_may_belong_to_a_customer_of_another_brand(client, auth, other_brand):
    CustomerFactory(brand=other_brand, email="shared@example.com")

    assert client.post(URL, json={"email": "shared@example.com"}, headers=auth).status_code == 201
    assert customer_count() == 2


def test_read_customer_by_id_email_or_phone(client, auth, brand):
    customer = CustomerFactory(brand=brand, email="reader@example.com", phone="+8801712345678")

    for ident in [
        customer.id,
        "reader@example.com",
        "READER@example.com",
        "+8801712345678",
        "01712345678",
    ]:
        response = client.get(f"{URL}/{ident}", headers=auth)
        assert response.status_code == 200, ident
        assert response.json["data"]["id"] == customer.id


def test_read_customer_shows_payment_count_and_total_paid(client, auth, brand):
    customer = CustomerFactory(brand=brand)
    completed_payment(brand=brand, customer=customer, amount=Decimal("120.50"))
    completed_payment(brand=brand, customer=customer, amount=Decimal("79.50"))
    PaymentFactory(
        brand=brand, customer=customer, amount=Decimal("1000.00")
    )  # still open: not paid

    data = client.get(f"{URL}/{customer.id}", headers=auth).json["data"]

    assert data["payment_count"] == 3
    assert data["total_paid"] == "200.00"


def test_total_paid_is_kept_per_currency_and_net_of_refunds(client, auth, brand):
    customer = CustomerFactory(brand=brand)
    completed_payment(brand=brand, customer=customer, amount=Decimal("1000.00"))
    completed_payment(brand=brand, customer=customer, amount=Decimal("10.00"), currency="USD")
    refunded = completed_payment(brand=brand, customer=customer, amount=Decimal("300.00"))
    partly = completed_payment(brand=brand, customer=customer, amount=Decimal("200.00"))
    create_refund(brand, refunded.transaction.trx_id)
    create_refund(brand, partly.transaction.trx_id, Decimal("50.00"))

    data = client.get(f"{URL}/{customer.id}", headers=auth).json["data"]

    assert data["payment_count"] == 4
    assert data["total_paid_by_currency"] == {"BDT": "1150.00", "USD": "10.00"}
    assert data["total_paid"] == "1150.00"  # the brand's first currency, BDT


def test_total_paid_is_the_first_currency_s_even_when_nothing_was_paid_in_it(client, auth, brand):
    customer = CustomerFactory(brand=brand)
    completed_payment(brand=brand, customer=customer, amount=Decimal("10.00"), currency="USD")

    data = client.get(f"{URL}/{customer.id}", headers=auth).json["data"]

    assert (data["total_paid"], data["total_paid_by_currency"]) == ("0.00", {"USD": "10.00"})


@pytest.mark.parametrize(
    "ident", ["999999", "nobody@example.com", "+8801799999999", "0", "abc", "%00"]
)
def test_unknown_customer_is_404(client, auth, brand, ident):
    CustomerFactory(brand=brand)

    response = client.get(f"{URL}/{ident}", headers=auth)

    assert response.status_code == 404
    assert response.json["code"] == "CUSTOMER_NOT_FOUND"
    assert response.json["success"] is False


def test_another_brands_customer_is_404_for_every_method(client, auth, other_brand):
    theirs = CustomerFactory(brand=other_brand, email="theirs@example.com", name="Theirs")

    for ident in [theirs.id, "theirs@example.com", theirs.phone]:
        assert client.get(f"{URL}/{ident}", headers=auth).json["code"] == "CUSTOMER_NOT_FOUND"
    assert (
        client.patch(f"{URL}/{theirs.id}", json={"name": "Mine now"}, headers=auth).status_code
        == 404
    )
    assert client.delete(f"{URL}/{theirs.id}", headers=auth).status_code == 404
    db.session.expire_all()
    assert db.session.get(Customer, theirs.id).name == "Theirs"
    assert client.get(URL, headers=auth).json["meta"]["total"] == 0


def test_list_customers_newest_first_with_pagination_meta(client, auth, brand):
    created = [CustomerFactory(brand=brand) for _ in range(3)]

    response = client.get(URL + "?per_page=2", headers=auth)
    second = client.get(URL + "?per_page=2&page=2", headers=auth)

    assert response.status_code == 200
    assert response.json["meta"] == {"page": 1, "per_page": 2, "total": 3, "total_pages": 2}
    ids = [row["id"] for row in response.json["data"] + second.json["data"]]
    assert ids == [customer.id for customer in reversed(created)]
    assert list(response.json["data"][0]) == PROFILE_FIELDS


def test_list_customers_counts_payments_of_every_row(client, auth, brand):
    payer, browser = CustomerFactory(brand=brand), CustomerFactory(brand=brand)
    completed_payment(brand=brand, customer=payer, amount=Decimal("10.00"))

    rows = {row["id"]: row for row in client.get(URL, headers=auth).json["data"]}

    assert (rows[payer.id]["payment_count"], rows[payer.id]["total_paid"]) == (1, "10.00")
    assert (rows[browser.id]["payment_count"], rows[browser.id]["total_paid"]) == (0, "0.00")


def test_list_customers_filters_by_email_phone_and_search(client, auth, brand):
    rahim = CustomerFactory(
        brand=brand, name="Rahim Uddin", email="rahim@example.com", phone="+8801711111111"
    )
    karim = CustomerFactory(
        brand=brand, name="Karim 50%_off", email="karim@example.org", phone="+8801822222222"
    )

    def ids(query):
        response = client.get(f"{URL}?{query}", headers=auth)
        assert response.status_code == 200, response.json
        return [row["id"] for row in response.json["data"]]

    assert ids("email=RAHIM@example.com") == [rahim.id]
    assert ids("phone=01822222222") == [karim.id]
    assert ids("phone=%2B8801711111111") == [rahim.id]
    assert ids("q=uddin") == [rahim.id]
    assert ids("q=example.org") == [karim.id]
    assert ids("q=%25_") == [karim.id]  # a literal "%_", not a wildcard
    assert ids("q=%25") == [karim.id]
    assert ids("q=nobody") == []


@pytest.mark.parametrize(
    "query, field",
    [
        ("page=0", "page"),
        ("page=x", "page"),
        ("per_page=101", "per_page"),
        ("per_page=0", "per_page"),
        ("phone=12", "phone"),
        ("email=", "email"),
        ("q=", "q"),
        ("q=" + "x" * 201, "q"),
        ("q=%00", "q"),
    ],
)
def test_list_customers_refuses_bad_queries(client, auth, query, field):
    response = client.get(f"{URL}?{query}", headers=auth)

    assert response.status_code == 422
    assert field in fields_at_fault(response)


def test_patch_customer_changes_only_the_given_fields(client, auth, brand):
    customer = CustomerFactory(
        brand=brand, name="Old", email="old@example.com", phone="+8801711111111"
    )

    response = client.patch(
        f"{URL}/{customer.id}", json={"name": "New", "email": "NEW@example.com"}, headers=auth
    )

    assert response.status_code == 200
    assert response.json["data"]["name"] == "New"
    assert response.json["data"]["email"] == "new@example.com"
    assert response.json["data"]["phone"] == "+8801711111111"
    db.session.expire_all()
    assert db.session.get(Customer, customer.id).email == "new@example.com"


def test_patch_customer_by_email_can_clear_the_name(client, auth, brand):
    customer = CustomerFactory(brand=brand, email="clear@example.com")

    response = client.patch(f"{URL}/clear@example.com", json={"name": None}, headers=auth)

    assert response.status_code == 200
    assert response.json["data"]["name"] is None
    assert response.json["data"]["id"] == customer.id


def test_patch_customer_cannot_remove_the_last_way_to_reach_them(client, auth, brand):
    customer = CustomerFactory(brand=brand, email="keep@example.com", phone=None)

    response = client.patch(f"{URL}/{customer.id}", json={"email": None}, headers=auth)

    assert response.status_code == 422
    assert fields_at_fault(response) == {"email", "phone"}
    db.session.expire_all()
    assert db.session.get(Customer, customer.id).email == "keep@example.com"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"email": "nope"}, "email"),
        ({"phone": "123"}, "phone"),
        ({"name": "n" * 201}, "name"),
        ({"name": 5}, "name"),
    ],
)
def test_patch_customer_refuses_bad_fields(client, auth, brand, body, field):
    customer = CustomerFactory(brand=brand, name="Same")

    response = client.patch(f"{URL}/{customer.id}", json=body, headers=auth)

    assert response.status_code == 422
    assert field in fields_at_fault(response)
    db.session.expire_all()
    assert db.session.get(Customer, customer.id).name == "Same"


def test_patch_customer_to_an_email_on_file_is_409(client, auth, brand):
    CustomerFactory(brand=brand, email="first@example.com")
    second = CustomerFactory(brand=brand, email="second@example.com")

    response = client.patch(f"{URL}/{second.id}", json={"email": "first@example.com"}, headers=auth)

    assert response.status_code == 409
    assert response.json["code"] == "CUSTOMER_EXISTS"
    db.session.expire_all()
    assert db.session.get(Customer, second.id).email == "second@example.com"


def test_delete_customer_answers_json_and_keeps_their_payments(client, auth, brand):
    customer = CustomerFactory(brand=brand)
    payment = PaymentFactory(brand=brand, customer=customer)

    response = client.delete(f"{URL}/{customer.id}", headers=auth)

    assert response.status_code == 200
    assert response.json == {"success": True, "data": {"id": customer.id, "deleted": True}}
    db.session.expire_all()
    assert db.session.get(Customer, customer.id) is None
    assert db.session.get(Payment, payment.id).customer_id is None
    assert client.get(f"{URL}/{customer.id}", headers=auth).status_code == 404


def test_customer_writes_need_the_write_scope(client, brand, make_key):
    reader = make_key(brand, ["read"])
    customer = CustomerFactory(brand=brand)

    assert client.get(URL, headers=reader).status_code == 200
    for response in [
        client.post(URL, json={"email": "w@example.com"}, headers=reader),
        client.patch(f"{URL}/{customer.id}", json={"name": "x"}, headers=reader),
        client.delete(f"{URL}/{customer.id}", headers=reader),
    ]:
        assert response.status_code == 403
        assert response.json["code"] == "INSUFFICIENT_SCOPE"
    assert customer_count() == 1


def test_payments_upsert_the_customer_the_api_then_shows(client, auth):
    body = {
        "amount": "250.00",
        "currency": "BDT",
        "customer_name": "Upserted",
        "customer_mail": "up@example.com",
        "customer_phone": "+8801755555555",
    }
    assert client.post("/api/v1/payments", json=body, headers=auth).status_code == 201

    data = client.get(f"{URL}/up@example.com", headers=auth).json["data"]

    assert (data["name"], data["phone"], data["payment_count"], data["total_paid"]) == (
        "Upserted",
        "+8801755555555",
        1,
        "0.00",
    )


# --- the wall of bad bodies ---------------------------------------------------------------------

GOOD = {"name": "Rahim Uddin", "email": "rahim@example.com", "phone": "+8801712345678"}
BAD_NAMES = [
    ("too long", '"' + "n" * 201 + '"'),
    ("huge", '"' + "n" * 100_000 + '"'),
    ("number", "7"),
    ("-1", "-1"),
    ("1.001", "1.001"),
    ("NaN literal", "NaN"),
    ("bool", "false"),
    ("list", '["name"]'),
    ("object", '{"a": 1}'),
    ("nul", '"A\\u0000B"'),
    ("lone surrogate", '"\\udfff"'),
]
FIELD_CASES = (
    [(f"email {label}", "email", raw) for label, raw in BAD_EMAILS]
    + [(f"phone {label}", "phone", raw) for label, raw in BAD_PHONES]
    + [(f"name {label}", "name", raw) for label, raw in BAD_NAMES]
)
# (id, body, content type, status, code, field at fault)
BAD_CREATE_BODIES = (
    body_cases(GOOD, "name")
    + [
        ("no body", None, None, 422, "VALIDATION_ERROR", "email"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "email"),
        (
            "only unknown fields",
            '{"mail": "rahim@example.com", "mobile": "+8801712345678"}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "email",
        ),
        (
            "no contact",
            raw_body(GOOD, email=None, phone=None),
            JSON,
            422,
            "VALIDATION_ERROR",
            "email",
        ),
        (
            "null contacts",
            raw_body(GOOD, email="null", phone="null"),
            JSON,
            422,
            "VALIDATION_ERROR",
            "phone",
        ),
    ]
    + [
        (label, raw_body(GOOD, **{field: raw}), JSON, 422, "VALIDATION_ERROR", field)
        for label, field, raw in FIELD_CASES
    ]
)
BAD_UPDATE_BODIES = (
    body_cases(GOOD, "name")
    + [
        ("no body", None, None, 422, "VALIDATION_ERROR", "body"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "body"),
        (
            "only unknown fields",
            '{"mail": "rahim@example.com"}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "body",
        ),
        (
            "clearing both contacts",
            '{"email": null, "phone": null}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "phone",
        ),
    ]
    + [
        (label, raw_body({}, **{field: raw}), JSON, 422, "VALIDATION_ERROR", field)
        for label, field, raw in FIELD_CASES
    ]
)


def profiles():
    """Every stored profile as (id, name, email, phone)."""
    db.session.expire_all()
    return db.session.execute(
        db.select(Customer.id, Customer.name, Customer.email, Customer.phone).order_by(Customer.id)
    ).all()


@pytest.mark.parametrize(
    "body, content_type, status, code, field",
    [case[1:] for case in BAD_CREATE_BODIES],
    ids=[case[0] for case in BAD_CREATE_BODIES],
)
def test_bad_customer_bodies_are_refused_in_the_envelope_and_write_nothing(
    client, auth, brand, body, content_type, status, code, field
):
    CustomerFactory(brand=brand, email="other@example.com", phone="+8801899999999")
    before = profiles()

    response = send(client, "post", URL, auth, body, content_type)

    assert_refused(response, status, code, field)
    assert profiles() == before


@pytest.mark.parametrize(
    "body, content_type, status, code, field",
    [case[1:] for case in BAD_UPDATE_BODIES],
    ids=[case[0] for case in BAD_UPDATE_BODIES],
)
def test_bad_customer_changes_are_refused_in_the_envelope_and_change_nothing(
    client, auth, brand, body, content_type, status, code, field
):
    customer = CustomerFactory(
        brand=brand, name="Same", email="same@example.com", phone="+8801711111111"
    )
    before = profiles()

    response = send(client, "patch", f"{URL}/{customer.id}", auth, body, content_type)

    assert_refused(response, status, code, field)
    assert profiles() == before


# --- the service rules, without HTTP ------------------------------------------------------------


def test_get_customer_tells_ids_from_local_phone_numbers(brand):
    from gateway.payments.customers import get_customer

    customer = CustomerFactory(brand=brand, email="svc@example.com", phone="+8801712345678")

    assert get_customer(brand, str(customer.id)) is customer
    assert get_customer(brand, "01712345678") is customer
    assert get_customer(brand, " SVC@example.com ") is customer


def test_update_customer_keeps_a_way_to_reach_them(brand):
    from gateway.domain_errors import DomainError
    from gateway.errors import http_status
    from gateway.payments.customers import update_customer

    customer = CustomerFactory(brand=brand, phone=None)

    with pytest.raises(DomainError) as raised:
        update_customer(customer, {"email": None})

    assert http_status(raised.value) == 422
    db.session.expire_all()
    assert db.session.get(Customer, customer.id).email is not None


def test_with_totals_reads_a_whole_page_in_one_query(brand, sql_statements):
    from gateway.payments.customers import with_totals

    customers = [CustomerFactory(brand=brand) for _ in range(5)]
    for customer in customers[:3]:
        completed_payment(brand=brand, customer=customer, amount=Decimal("5.00"))
    db.session.expire_all()
    customers = [db.session.get(Customer, customer.id) for customer in customers]
    db.session.refresh(brand)  # the caller has its brand: the request read it with its key
    sql_statements.clear()

    with_totals(customers, brand)

    assert len(sql_statements) == 1
    assert [(c.payment_count, c.total_paid) for c in customers] == [(1, Decimal("5.00"))] * 3 + [
        (0, Decimal("0.00"))
    ] * 2


def test_with_totals_keeps_currencies_apart_and_a_refunded_fee_off_in_one_query(
    brand, sql_statements
):
    """A refund that returned the method fee too (518.50 of a 500.00 payment) takes the payment
    to 0.00, not below."""
    from gateway.payments.customers import with_totals

    brand.refund_fee = True
    db.session.commit()
    customer = CustomerFactory(brand=brand)
    completed_payment(brand=brand, customer=customer, amount=Decimal("300.00"))
    completed_payment(brand=brand, customer=customer, amount=Decimal("12.50"), currency="USD")
    with_fee = completed_payment(
        brand=brand, customer=customer, amount=Decimal("500.00"), fee=Decimal("18.50")
    )
    create_refund(brand, with_fee.transaction.trx_id)
    PaymentFactory(brand=brand, customer=customer, currency="USD", amount=Decimal("99.00"))
    db.session.expire_all()
    customer = db.session.get(Customer, customer.id)
    db.session.refresh(brand)  # the caller has its brand: the request read it with its key
    sql_statements.clear()

    [row] = with_totals([customer], brand)

    assert len(sql_statements) == 1
    assert row.payment_count == 4
    assert row.total_paid_by_currency == {"BDT": Decimal("300.00"), "USD": Decimal("12.50")}
    assert row.total_paid == Decimal("300.00")
