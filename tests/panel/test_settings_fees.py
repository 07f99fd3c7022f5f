"""Panel settings of method fees (a worked example per method, a fee form) and the brand's
refund_fee; the payment page shows the fee and what the customer sent."""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import PaymentMethodFactory, completed_payment
from tests.panel.conftest import audit_actions, post_form, reloaded
from tests.panel.test_settings import VALID


def fee_fields(method, **values):
    """The fee form of one method as the page posts it (each method's fields are prefixed)."""
    fields = {"fee_fixed": "", "fee_percent": "", "fee_min": "", "fee_max": "", **values}
    return {f"method-{method.id}-{name}": value for name, value in fields.items()}


def test_each_method_shows_a_worked_example_of_its_fee(as_admin, brand):
    PaymentMethodFactory(brand=brand, fee_percent=Decimal("1.85"))
    PaymentMethodFactory(brand=brand, provider="nagad")

    html = as_admin.get("/panel/settings").get_data(as_text=True)

    assert "On ৳ 1,000.00 the customer sends ৳ 1,018.50" in html
    assert "No fee: the customer sends the amount." in html


def test_setting_a_methods_fee_is_saved_and_audited(as_admin, brand, admin):
    method = PaymentMethodFactory(brand=brand)

    response = post_form(
        as_admin,
        f"/panel/settings/methods/{method.id}/fee",
        fee_fields(method, fee_fixed="5", fee_percent="1.5", fee_min="10", fee_max="40"),
        follow_redirects=True,
    )

    assert response.status_code == 200
    assert f"The fee of {method.number} is saved." in response.get_data(as_text=True)
    stored = reloaded(method)
    assert (stored.fee_fixed, stored.fee_percent, stored.fee_min, stored.fee_max) == (
        Decimal("5.00"),
        Decimal("1.500"),
        Decimal("10.00"),
        Decimal("40.00"),
    )
    assert audit_actions(brand)[-1] == ("payment_method.fee", admin.email, str(method.id))
    assert "On ৳ 1,000.00 the customer sends ৳ 1,020.00" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"fee_fixed": "-5"}, "fee_fixed", "The fixed fee cannot be negative."),
        ({"fee_percent": "150"}, "fee_percent", "The fee percent cannot be over 100."),
        ({"fee_percent": "1,5"}, "fee_percent", "The fee percent must be a number"),
        (
            {"fee_min": "50", "fee_max": "10"},
            "fee_min",
            "The minimum fee (50.00) cannot be above the maximum fee (10.00).",
        ),
        ({"fee_max": "x" * 21}, "fee_max", "Field cannot be longer than 20 characters."),
    ],
)
def test_a_bad_fee_is_refused_beside_its_field_and_nothing_changes(
    as_admin, brand, values, field, message
):
    method = PaymentMethodFactory(brand=brand, fee_percent=Decimal("1"))

    response = post_form(
        as_admin, f"/panel/settings/methods/{method.id}/fee", fee_fields(method, **values)
    )

    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert message in html and f'id="method-{method.id}-{field}-error"' in html
    assert reloaded(method).fee_percent == Decimal("1.000")
    assert "payment_method.fee" not in [action for action, *_ in audit_actions(brand)]


def test_a_fee_form_without_its_csrf_token_changes_nothing(as_admin, brand):
    method = PaymentMethodFactory(brand=brand)

    response = as_admin.post(
        f"/panel/settings/methods/{method.id}/fee", data=fee_fields(method, fee_fixed="9")
    )

    assert response.status_code in (400, 422)
    assert reloaded(method).fee_fixed == Decimal("0.00")


def test_another_brands_method_fee_cannot_be_set(as_admin, other_brand):
    theirs = PaymentMethodFactory(brand=other_brand)

    response = post_form(
        as_admin, f"/panel/settings/methods/{theirs.id}/fee", fee_fields(theirs, fee_fixed="9")
    )

    assert response.status_code == 404
    assert reloaded(theirs).fee_fixed == Decimal("0.00")


def test_a_number_is_added_with_its_fee_and_a_bad_one_is_refused(as_admin, brand):
    base = {"provider": "bkash", "number": "01711223344", "kind": "personal"}
    refused = post_form(as_admin, "/panel/settings/methods", {**base, "fee_percent": "-1"})
    assert refused.status_code == 422
    assert 'id="fee_percent-error"' in refused.get_data(as_text=True)
    assert db.session.execute(db.select(PaymentMethod)).first() is None

    post_form(as_admin, "/panel/settings/methods", {**base, "fee_fixed": "5", "fee_max": "8"})

    method = db.session.execute(db.select(PaymentMethod)).scalar_one()
    assert (method.fee_fixed, method.fee_percent, method.fee_max) == (
        Decimal("5.00"),
        Decimal("0.000"),
        Decimal("8.00"),
    )


def test_the_brand_chooses_whether_refunds_return_the_fee(as_admin, brand):
    assert brand.refund_fee is False

    post_form(as_admin, "/panel/settings", {**VALID, "refund_fee": "y"})
    assert reloaded(brand).refund_fee is True
    post_form(as_admin, "/panel/settings", VALID)
    assert reloaded(brand).refund_fee is False


def test_the_payment_page_shows_the_fee_and_what_the_customer_sent(as_admin, brand):
    brand.refund_fee = True
    db.session.commit()
    payment = completed_payment(brand=brand, amount=Decimal("1000.00"), fee=Decimal("18.50"))

    html = as_admin.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)

    assert "Method fee" in html and "৳ 18.50" in html
    assert "Customer sends" in html and "৳ 1,018.50" in html
    assert "৳ 1,018.50 can be refunded" in html
