"""A plugin's payment in another currency is fixed in taka at the brand's rate like the API's; an
unaccepted currency is refused in the dialect's own shape, naming the accepted ones."""

from decimal import Decimal

from gateway.extensions import db
from gateway.payments.currencies import accept_currency
from gateway.payments.models.payment import Payment
from tests.compat.conftest import P3_HEADER
from tests.compat.test_compat_errors import P3_BODY


def test_a_piprapay_payment_in_usd_is_fixed_in_taka_at_the_brand_rate(client, brand, compat_key):
    accept_currency(brand, "USD", "121.5", "owner@shop.test")

    response = client.post(
        "/api/checkout/redirect",
        json={**P3_BODY, "currency": "usd"},
        headers={P3_HEADER: compat_key("piprapay3")},
    )

    assert response.status_code == 200, response.get_data(as_text=True)
    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert (payment.currency, payment.amount, payment.amount_bdt, payment.exchange_rate) == (
        "USD",
        Decimal("10.00"),
        Decimal("1215.00"),
        Decimal("121.5"),
    )


def test_a_piprapay_payment_in_an_unaccepted_currency_names_the_accepted_ones(
    client, brand, compat_key
):
    response = client.post(
        "/api/checkout/redirect",
        json={**P3_BODY, "currency": "EUR"},
        headers={P3_HEADER: compat_key("piprapay3")},
    )

    assert response.status_code == 400
    assert response.get_json()["error"] == {
        "code": "INVALID_CURRENCY",
        "message": "Currency must be one of BDT, USD.",
    }
    assert db.session.execute(db.select(Payment)).first() is None
