"""The bytes the payment calls answer, as the specification writes them: amounts as two-decimal
strings, timestamps in ISO 8601 with their offset, absent values as null, keys in the documented
order. Written out literally, so that no change of serializer can move them.
"""

import json
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.payment import Transaction
from tests.factories import BrandFactory, PaymentFactory, completed_payment

PUBLIC_ID = "6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f"
TOKEN = "tok_wire_test_0123456789abcdef"
CREATED = datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
EXPIRES = datetime(2030, 1, 2, 3, 34, 5, tzinfo=timezone.utc)
COMPLETED = datetime(2030, 1, 2, 3, 10, 0, 1, tzinfo=timezone.utc)
METADATA = {"order": 1, "gift": True, "note": None, "ratio": 0.5, "name": "রহিম"}


def odd_payment(brand, **changes):
    """A payment of `brand` with fixed ids, times and odd values."""
    values = {
        "public_id": PUBLIC_ID,
        "token": TOKEN,
        "brand": brand,
        "reference": 'quote"back\\slash ভাড়া 😀',
        "amount": Decimal("7.1"),
        "amount_refunded": Decimal("0"),
        "currency": "BDT",
        "status": "created",
        "created_at": CREATED,
        "expires_at": EXPIRES,
        "metadata_json": METADATA,
        "customer_name": "রহিম উদ্দিন",
        "customer_email": "",
        "customer_phone": None,
        **changes,
    }
    return PaymentFactory(**values)


READ_BODY = (
    '{"success":true,"data":{'
    f'"payment_id":"{PUBLIC_ID}","token":"{TOKEN}",'
    f'"checkout_url":"https://pay.shop.example/checkout/{TOKEN}","status":"created",'
    '"trx_id":null,"reference":"quote\\"back\\\\slash \\u09ad\\u09be\\u09a1\\u09bc\\u09be '
    '\\ud83d\\ude00","amount":"7.10","amount_refunded":"0.00","fee":"0.00","currency":"BDT",'
    '"provider":null,"provider_trx_id":null,"review_reason":null,'
    '"created_at":"2030-01-02T03:04:05.678901+00:00","completed_at":null,'
    '"expires_at":"2030-01-02T03:34:05+00:00",'
    '"customer":{"name":"\\u09b0\\u09b9\\u09bf\\u09ae \\u0989\\u09a6\\u09cd\\u09a6\\u09bf\\u09a8",'
    '"email":"","phone":null},'
    '"metadata":{"order":1,"gift":true,"note":null,"ratio":0.5,"name":"\\u09b0\\u09b9\\u09bf\\u09ae"}'
    ',"amount_paid":"7.10","amount_bdt":"7.10","exchange_rate":null,"livemode":true'
    "}}\n"
)


@pytest.fixture
def shop(make_key):
    """A brand with its own checkout origin, and a read+write key of it."""
    brand = BrandFactory(base_url="https://pay.shop.example/")
    return brand, make_key(brand)


def test_reading_a_payment_answers_the_documented_bytes(client, shop):
    brand, auth = shop
    odd_payment(brand)

    response = client.get(f"/api/v1/payments/{PUBLIC_ID}", headers=auth)

    assert response.status_code == 200
    assert response.content_type == "application/json"
    assert response.get_data(as_text=True) == READ_BODY


def test_a_completed_payment_reads_with_its_trx_id_provider_and_completion_time(client, shop):
    brand, auth = shop
    payment = completed_payment(
        brand=brand,
        public_id=PUBLIC_ID,
        amount=Decimal("99999999.99"),
        amount_refunded=Decimal("120.5"),
        metadata_json=None,
        reference=None,
        review_reason="Amount differs",
    )
    db.session.execute(
        db.update(Transaction)
        .where(Transaction.payment_id == payment.id)
        .values(trx_id="TRXABCDEFGHIJKL")
    )
    db.session.execute(
        db.update(type(payment))
        .where(type(payment).id == payment.id)
        .values(completed_at=COMPLETED, provider_trx_id="BK42")
    )
    db.session.commit()

    data = client.get(f"/api/v1/payments/{PUBLIC_ID}", headers=auth).get_json()["data"]

    assert [(key, data[key]) for key in list(data)[4:15]] == [
        ("trx_id", "TRXABCDEFGHIJKL"),
        ("reference", None),
        ("amount", "99999999.99"),
        ("amount_refunded", "120.50"),
        ("fee", "0.00"),
        ("currency", "BDT"),
        ("provider", "bkash"),
        ("provider_trx_id", "BK42"),
        ("review_reason", "Amount differs"),
        ("created_at", data["created_at"]),
        ("completed_at", "2030-01-02T03:10:00.000001+00:00"),
    ]
    assert data["status"] == "completed" and data["metadata"] is None
    assert data["customer"] == {"name": None, "email": None, "phone": None}


def test_a_listed_payment_reads_as_the_single_read_does(client, shop):
    brand, auth = shop
    odd_payment(brand)

    listed = client.get("/api/v1/payments", headers=auth).get_data(as_text=True)

    single = json.loads(READ_BODY)["data"]
    expected_meta = '"meta":{"page":1,"per_page":25,"total":1,"total_pages":1}}\n'
    assert listed == (
        '{"success":true,"data":['
        + json.dumps(single, separators=(",", ":"))
        + "],"
        + expected_meta
    )


def test_a_cancelled_payment_answers_the_read_shape(client, shop):
    brand, auth = shop
    odd_payment(brand)

    response = client.post(f"/api/v1/payments/{PUBLIC_ID}/cancel", headers=auth)

    data = response.get_json()["data"]
    assert response.status_code == 200
    assert list(data) == list(json.loads(READ_BODY)["data"])
    assert (data["status"], data["amount"], data["created_at"]) == (
        "cancelled",
        "7.10",
        "2030-01-02T03:04:05.678901+00:00",
    )


def test_creating_a_payment_answers_the_documented_bytes(client, shop):
    brand, auth = shop

    response = client.post(
        "/api/v1/payments", json={"amount": "12.3", "currency": "bdt"}, headers=auth
    )

    data = response.get_json()["data"]
    assert response.status_code == 201
    assert response.get_data(as_text=True) == (
        '{"success":true,"data":{'
        f'"payment_id":"{data["payment_id"]}","token":"{data["token"]}",'
        f'"checkout_url":"https://pay.shop.example/checkout/{data["token"]}",'
        '"status":"created","livemode":true}}\n'
    )
