"""The flat dumps of the payment read and creation write exactly what their schemas' dumps write,
key order included."""

import itertools
import json
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.lifecycle import get_payment_view
from gateway.payments.models.payment import PAYMENT_STATUSES, Payment
from gateway.schemas.common import envelope
from gateway.schemas.payment import (
    PaymentCreatedSchema,
    PaymentSchema,
    dump_created_payment,
    dump_payment,
)
from tests.factories import BrandFactory, PaymentFactory, completed_payment

SCHEMA = PaymentSchema()
CREATED_SCHEMA = PaymentCreatedSchema()
REFERENCES = (None, "", "ORDER-1", "ভাড়া №1 😀", "x" * 255, 'quote"back\\slash')
AMOUNTS = (
    (Decimal("0.01"), Decimal("0.00")),
    (Decimal("500.00"), Decimal("120.50")),
    (Decimal("99999999.99"), Decimal("99999999.99")),
    (Decimal("7.1"), Decimal("0")),
)
METADATA = (None, {}, {"order": 1, "gift": True, "note": None, "ratio": 0.5, "name": "রহিম"})
CUSTOMERS = (
    (None, None, None),
    ("Rahim Uddin", "rahim@example.com", "+8801712345678"),
    ("রহিম উদ্দিন", "", None),
)


def odd_payments():
    """Payments across every status and many odd values, two brands (one with its own origin)."""
    brands = [BrandFactory(base_url=None), BrandFactory(base_url="https://pay.shop.example/")]
    now = utcnow()
    payments = []
    combos = itertools.product(PAYMENT_STATUSES, REFERENCES, AMOUNTS, METADATA, CUSTOMERS)
    for number, (status, reference, amounts, metadata, customer) in enumerate(combos):
        if number % 7:  # every status, a seventh of the rest: enough variety, a quick test
            continue
        amount, refunded = amounts
        name, email, phone = customer
        payments.append(
            PaymentFactory(
                brand=brands[number % 2],
                status=status,
                reference=reference,
                amount=amount,
                amount_refunded=refunded,
                metadata_json=metadata,
                customer_name=name,
                customer_email=email,
                customer_phone=phone,
                provider="bkash" if number % 3 else None,
                provider_trx_id=f"BK{number}" if number % 3 else None,
                review_reason="Amount differs" if number % 5 == 0 else None,
                completed_at=now - timedelta(microseconds=number) if number % 2 else None,
                created_at=now - timedelta(days=number, microseconds=number),
            )
        )
    payments.append(completed_payment(brand=brands[1]))  # with its transaction's trx_id
    return payments


def assert_same_dump(obj):
    flat, marshmallow = dump_payment(obj), SCHEMA.dump(obj)
    assert list(flat.items()) == list(marshmallow.items())


def test_flat_dump_equals_the_schema_dump_for_view_rows_and_payments(app):
    payments = odd_payments()
    assert len(payments) > 80
    ids = [(payment.brand_id, payment.public_id) for payment in payments]
    db.session.expire_all()
    for brand_id, public_id in ids:
        assert_same_dump(get_payment_view(brand_id, public_id))
    for payment in db.session.execute(db.select(Payment)).scalars():
        assert_same_dump(payment)
        created = dump_created_payment(payment)
        assert list(created.items()) == list(CREATED_SCHEMA.dump(payment).items())
    assert any(dump_payment(get_payment_view(*pair))["trx_id"] for pair in ids)


def test_the_read_endpoint_answers_the_schemas_envelope(client, brand, make_key):
    auth = make_key(brand)
    payment = completed_payment(
        brand=brand, metadata_json={"order": 7}, customer_name="রহিম", reference=None
    )
    response = client.get(f"/api/v1/payments/{payment.public_id}", headers=auth)
    assert response.status_code == 200
    expected = envelope(PaymentSchema)().dump(
        {"success": True, "data": get_payment_view(brand.id, payment.public_id)}
    )
    assert response.get_data(as_text=True) == json.dumps(expected, separators=(",", ":")) + "\n"


def test_the_create_endpoint_answers_the_schemas_envelope(client, brand, make_key):
    body = {"amount": "12.30", "currency": "BDT", "customer_name": "রহিম", "reference": "R-1"}
    response = client.post("/api/v1/payments", json=body, headers=make_key(brand))
    assert response.status_code == 201
    payment = db.session.execute(db.select(Payment)).scalar_one()
    expected = envelope(PaymentCreatedSchema)().dump({"success": True, "data": payment})
    assert response.get_data(as_text=True) == json.dumps(expected, separators=(",", ":")) + "\n"


@pytest.mark.parametrize(
    "changes",
    [
        {"reference": b"bytes \xe0\xa6\xad"},  # a String field given bytes: decoded
        {"reference": 12345, "currency": 3.5},  # a String field given a number: str()
        {"metadata_json": [1, "two", None]},  # Raw: as it is
        {"completed_at": None, "amount_refunded": None},
    ],
)
def test_flat_dump_formats_odd_types_as_marshmallow_does(changes):
    now = utcnow()
    row = SimpleNamespace(
        public_id="p",
        token="t",
        status="created",
        brand_base_url=None,
        trx_id=None,
        reference="r",
        amount=Decimal("1.5"),
        amount_refunded=Decimal("0"),
        currency="BDT",
        provider=None,
        provider_trx_id=None,
        review_reason=None,
        created_at=now,
        completed_at=now,
        expires_at=now,
        customer_name=None,
        customer_email=None,
        customer_phone=None,
        metadata_json=None,
    )
    for name, value in changes.items():
        setattr(row, name, value)
    assert_same_dump(row)


def test_an_attribute_the_object_lacks_is_left_out_as_marshmallow_leaves_it(app):
    row = SimpleNamespace(
        public_id="p",
        token="t",
        brand_base_url="https://pay.example",
        customer_name=None,
        customer_email=None,
        customer_phone=None,
    )
    with app.test_request_context():
        assert_same_dump(row)
        assert "status" not in dump_payment(row) and dump_payment(row)["fee"] == "0.00"
