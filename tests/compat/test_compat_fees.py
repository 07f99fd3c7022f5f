"""Each compatibility dialect carries the method's fee in its own field names: UddoktaPay `fee`
and `charged_amount`, PipraPay 2 `fee` and `total` (amount + fee − refund), PipraPay 3 `fee`,
`total` and `local_net_amount`."""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.payments.refunds import create_refund
from tests.checkout_helpers import submit_trx_id
from tests.compat.conftest import compat_row  # noqa: F401
from tests.compat.test_compat_flow import HEADER, ID_FIELD, VERIFY_PATH, create, create_body
from tests.factories import PaymentMethodFactory, bkash_text, ingest

# What each dialect says of a ৳500 payment paid through bKash at 1.85% (fee ৳9.25).
EXPECTED = {
    "uddoktapay": {"amount": "500.00", "fee": "9.25", "charged_amount": "509.25"},
    "piprapay2": {"amount": "500.00", "fee": "9.25", "total": "509.25", "refund_amount": "0.00"},
    "piprapay3": {
        "amount": "500.00",
        "fee": "9.25",
        "discount_amount": "0.00",
        "total": "509.25",
        "local_net_amount": "509.25",
    },
}


def paid_with_fee(client, brand, phone, compat_key, dialect):
    """A dialect payment paid at checkout through bKash with its fee; (secret, external id)."""
    bkash = PaymentMethodFactory(brand=brand, number="01712345678", fee_percent=Decimal("1.85"))
    secret = compat_key(dialect)
    status, created = create(
        client, dialect, secret, create_body(dialect, "https://shop.example/ipn")
    )
    assert status == 200, created
    external_id = created.get("pp_id") or compat_row_id()
    payment = compat_row(external_id).payment
    assert submit_trx_id(client, payment, bkash, trx_id="8N7A6B5C4D").status_code == 303
    ingest(phone, bkash_text(amount="509.25", trx_id="8N7A6B5C4D"))
    db.session.expire_all()
    assert db.session.get(Payment, payment.id).status == "completed"
    return secret, external_id


def compat_row_id():
    """UddoktaPay's answer names no id: the one dialect row's."""
    from gateway.compat.models.compat import CompatPayment

    return db.session.execute(db.select(CompatPayment)).scalar_one().external_id


def verify(client, dialect, secret, external_id):
    response = client.post(
        VERIFY_PATH[dialect],
        json={ID_FIELD[dialect]: external_id},
        headers={HEADER[dialect]: secret},
    )
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.mark.parametrize("dialect", ["uddoktapay", "piprapay2", "piprapay3"])
def test_each_dialect_carries_the_fee_and_the_total_in_its_own_fields(
    client, brand, phone, compat_key, dialect
):
    secret, external_id = paid_with_fee(client, brand, phone, compat_key, dialect)

    body = verify(client, dialect, secret, external_id)

    assert {name: body[name] for name in EXPECTED[dialect]} == EXPECTED[dialect]


def test_piprapay2_total_is_amount_plus_fee_less_the_refund(client, brand, phone, compat_key):
    brand.refund_fee = True
    db.session.commit()
    secret, external_id = paid_with_fee(client, brand, phone, compat_key, "piprapay2")
    payment = compat_row(external_id).payment

    create_refund(brand, payment.transaction.trx_id, Decimal("100.00"))

    body = verify(client, "piprapay2", secret, external_id)
    assert (body["fee"], body["refund_amount"], body["total"]) == ("9.25", "100.00", "409.25")
