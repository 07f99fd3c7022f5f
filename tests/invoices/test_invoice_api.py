"""/api/v1/invoices: bad input in the error envelope with the field at fault, scopes, brands,
states.
"""

import json

import pytest

from gateway.extensions import db
from gateway.invoices.models.invoice import Invoice
from gateway.mail.models.mail import OutboundMail
from tests.bad_input import BAD_EMAILS, BAD_PHONES, JSON, assert_refused, body_cases, raw_body, send
from tests.invoices.conftest import an_invoice

URL = "/api/v1/invoices"
# Values no column can store are refused on the top-level field that holds them (BaseSchema).
UNSTORABLE = {"NaN literal", "nul", "lone surrogate", "1e400", "Infinity literal"}
GOOD = {
    "customer": {"name": "Rahim", "email": "rahim@example.com"},
    "items": [{"description": "Design", "quantity": "2", "unit_price": "500.00"}],
}
ITEM = GOOD["items"][0]


def items(**raw):
    """The items list with the one item's fields replaced by raw JSON fragments."""
    return "[" + raw_body(ITEM, **raw) + "]"


BAD_BODIES = (
    body_cases(GOOD, "customer_id")
    + [
        ("no body", None, None, 422, "VALIDATION_ERROR", "items"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "items"),
        (
            "no customer",
            raw_body(GOOD, customer=None),
            JSON,
            422,
            "VALIDATION_ERROR",
            "customer_id",
        ),
        (
            "customer unknown",
            raw_body(GOOD, customer=None, customer_id='"424242"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "customer_id",
        ),
        (
            "customer without contact",
            raw_body(GOOD, customer='{"name": "X"}'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "customer",
        ),
        ("items empty", raw_body(GOOD, items="[]"), JSON, 422, "VALIDATION_ERROR", "items"),
        ("items not a list", raw_body(GOOD, items='"x"'), JSON, 422, "VALIDATION_ERROR", "items"),
        (
            "101 items",
            raw_body(GOOD, items=json.dumps([ITEM] * 101)),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items",
        ),
        (
            "item not an object",
            raw_body(GOOD, items="[1]"),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items.0",
        ),
        (
            "description missing",
            raw_body(GOOD, items=items(description=None)),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items.0.description",
        ),
        (
            "description blank",
            raw_body(GOOD, items=items(description='" "')),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items.0.description",
        ),
        (
            "description huge",
            raw_body(GOOD, items=items(description='"' + "x" * 501 + '"')),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items.0.description",
        ),
        (
            "total over MAX_AMOUNT",
            raw_body(GOOD, items=items(quantity='"1000000"', unit_price='"999999.00"')),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items",
        ),
        (
            "discount above the total",
            raw_body(GOOD, discount='"1000.01"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "discount",
        ),
        (
            "discount negative",
            raw_body(GOOD, discount='"-1"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "discount",
        ),
        (
            "vat over 100",
            raw_body(GOOD, vat_rate='"100.5"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "vat_rate",
        ),
        (
            "vat three decimals",
            raw_body(GOOD, vat_rate='"7.125"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "vat_rate",
        ),
        (
            "currency unknown",
            raw_body(GOOD, currency='"EUR"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "currency",
        ),
        (
            "currency not a code",
            raw_body(GOOD, currency='"taka"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "currency",
        ),
        (
            "due date not a date",
            raw_body(GOOD, due_date='"tomorrow"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "due_date",
        ),
        (
            "language unknown",
            raw_body(GOOD, language='"fr"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "language",
        ),
        (
            "notes huge",
            raw_body(GOOD, notes='"' + "x" * 2001 + '"'),
            JSON,
            422,
            "VALIDATION_ERROR",
            "notes",
        ),
    ]
    + [
        (
            f"quantity {label}",
            raw_body(GOOD, items=items(quantity=raw)),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items" if label in UNSTORABLE else "items.0.quantity",
        )
        for label, raw in [
            ("zero", '"0"'),
            ("negative", '"-1"'),
            ("4 decimals", '"1.0001"'),
            ("NaN", '"NaN"'),
            ("Infinity", '"Infinity"'),
            ("1e400", "1e400"),
            ("bool", "true"),
            ("list", "[1]"),
            ("text", '"two"'),
            ("huge", '"1' + "0" * 40 + '"'),
        ]
    ]
    + [
        (
            f"unit_price {label}",
            raw_body(GOOD, items=items(unit_price=raw)),
            JSON,
            422,
            "VALIDATION_ERROR",
            "items.0.unit_price",
        )
        for label, raw in [
            ("missing", None),
            ("3 decimals", '"1.001"'),
            ("negative", '"-5"'),
            ("NaN", '"NaN"'),
            ("bool", "false"),
            ("object", "{}"),
            ("huge", '"1' + "0" * 40 + '"'),
        ]
    ]
    + [
        (
            f"email {label}",
            raw_body(GOOD, customer='{"email": ' + raw + "}"),
            JSON,
            422,
            "VALIDATION_ERROR",
            "customer" if label in UNSTORABLE else "customer.email",
        )
        for label, raw in BAD_EMAILS
        if label not in ("empty", "blank")
    ]
    + [
        (
            f"phone {label}",
            raw_body(GOOD, customer='{"phone": ' + raw + "}"),
            JSON,
            422,
            "VALIDATION_ERROR",
            "customer" if label in UNSTORABLE else "customer.phone",
        )
        for label, raw in BAD_PHONES
        if label not in ("empty", "blank")
    ]
)


@pytest.mark.parametrize(
    "body,content_type,status,code,field",
    [case[1:] for case in BAD_BODIES],
    ids=[case[0] for case in BAD_BODIES],
)
def test_a_bad_invoice_is_refused_in_the_envelope_and_writes_nothing(
    client, auth, body, content_type, status, code, field
):
    response = send(client, "post", URL, auth, body, content_type)
    assert_refused(response, status, code, field)
    db.session.expire_all()
    assert db.session.scalar(db.select(db.func.count()).select_from(Invoice)) == 0


def test_a_good_invoice_is_created_with_its_totals(client, auth):
    response = client.post(URL, json={**GOOD, "vat_rate": 7.5, "discount": 100}, headers=auth)
    assert response.status_code == 201, response.json
    data = response.json["data"]
    assert data["items"] == [
        {"description": "Design", "quantity": "2", "unit_price": "500.00", "amount": "1000.00"}
    ]
    assert (data["subtotal"], data["discount"], data["vat_rate"], data["vat_amount"]) == (
        "1000.00",
        "100.00",
        "7.5",
        "67.50",
    )
    assert (data["total"], data["status"], data["number"]) == ("967.50", "draft", "INV-0001")
    assert data["customer"]["email"] == "rahim@example.com"


@pytest.mark.parametrize(
    "channels,code",
    [(["fax"], "VALIDATION_ERROR"), ([], "VALIDATION_ERROR"), (["email"], "VALIDATION_ERROR")],
)
def test_send_refuses_a_channel_it_cannot_use(client, auth, brand, channels, code):
    invoice = an_invoice(brand)  # the brand has no SMTP settings: e-mail is refused
    response = client.post(
        f"{URL}/{invoice.public_id}/send", json={"channels": channels}, headers=auth
    )
    assert_refused(response, 422, code, "channels")
    assert db.session.get(Invoice, invoice.id).status == "draft"


@pytest.mark.parametrize("address", ["buyer@shop.test", "a@b.local", "shop@localhost"])
def test_send_by_email_refuses_an_address_mail_cannot_take(
    client, auth, brand, smtp_server, address
):
    smtp_server.configure(brand)
    customer = client.post(
        "/api/v1/customers", json={"name": "Odd", "email": address}, headers=auth
    )
    assert customer.status_code == 201, customer.json  # the customers API takes the address
    customer_id = str(customer.json["data"]["id"])
    created = client.post(
        URL, json={"customer_id": customer_id, "items": GOOD["items"]}, headers=auth
    )
    assert created.status_code == 201, created.json

    response = client.post(
        f"{URL}/{created.json['data']['invoice_id']}/send",
        json={"channels": ["email"]},
        headers=auth,
    )

    assert_refused(response, 422, "VALIDATION_ERROR", "channels")
    assert [error["code"] for error in response.json["errors"]] == ["unsendable_email"]
    db.session.expire_all()
    assert db.session.scalar(db.select(Invoice.status)) == "draft"
    assert db.session.scalar(db.select(db.func.count()).select_from(OutboundMail)) == 0


def test_a_sent_invoice_cannot_be_changed_and_a_void_one_cannot_be_sent(client, auth, brand):
    invoice = an_invoice(brand)
    url = f"{URL}/{invoice.public_id}"
    assert client.post(f"{url}/send", json={"channels": ["sms"]}, headers=auth).status_code == 200
    assert_refused(client.patch(url, json={"notes": "x"}, headers=auth), 409, "INVALID_STATE")
    assert client.post(f"{url}/void", headers=auth).json["data"]["status"] == "void"
    assert_refused(client.post(f"{url}/void", headers=auth), 409, "INVALID_STATE")
    assert_refused(
        client.post(f"{url}/send", json={"channels": ["sms"]}, headers=auth), 409, "INVALID_STATE"
    )
    assert_refused(client.patch(url, json={}, headers=auth), 422, "VALIDATION_ERROR", "body")


def test_another_brands_invoice_is_not_found(client, auth, other_brand):
    invoice = an_invoice(other_brand)
    for method, suffix in (("get", ""), ("patch", ""), ("post", "/void"), ("post", "/send")):
        response = getattr(client, method)(
            f"{URL}/{invoice.public_id}{suffix}", json={"notes": "x"}, headers=auth
        )
        assert_refused(response, 404, "INVOICE_NOT_FOUND")
    assert client.get(URL, headers=auth).json["meta"]["total"] == 0


def test_a_read_key_cannot_write(client, brand, make_key):
    read_only = make_key(brand, ("read",))
    assert_refused(client.post(URL, json=GOOD, headers=read_only), 403, "INSUFFICIENT_SCOPE")
    assert client.get(URL, headers=read_only).status_code == 200


def test_the_list_pages_and_filters(client, auth, brand):
    for _ in range(3):
        an_invoice(brand)
    page = client.get(f"{URL}?per_page=2&page=2", headers=auth).json
    assert page["meta"] == {"page": 2, "per_page": 2, "total": 3, "total_pages": 2}
    assert [i["number"] for i in page["data"]] == ["INV-0001"]
    assert client.get(f"{URL}?status=paid", headers=auth).json["data"] == []
    assert client.get(f"{URL}?q=inv-0002", headers=auth).json["meta"]["total"] == 1
    assert_refused(
        client.get(f"{URL}?status=lost", headers=auth), 422, "VALIDATION_ERROR", "status"
    )
