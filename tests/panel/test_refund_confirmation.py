"""A refund in the panel is spelt out (amount, customer) and recorded only when that is
confirmed."""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.payment import Refund
from gateway.payments.refunds import create_refund
from tests.factories import completed_payment
from tests.panel.conftest import post_form, reloaded
from tests.panel.test_payment_actions import CONFIRM_FORM, HIDDEN, refund


def refunds():
    return db.session.execute(db.select(Refund.amount).order_by(Refund.id)).scalars().all()


@pytest.fixture
def paid(brand):
    return completed_payment(
        brand=brand,
        amount=Decimal("500.00"),
        customer_name="Rahim Uddin",
        customer_phone="+8801712345678",
    )


def test_the_first_post_asks_to_confirm_the_amount_and_the_customer_and_records_nothing(
    as_staff, paid
):
    response = post_form(
        as_staff, f"/panel/payments/{paid.public_id}/refund", {"amount": "120.5", "reason": "Late"}
    )

    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Refund ৳ 120.50 to Rahim Uddin (+8801712345678)?" in html and "Reason: Late" in html
    fields = dict(HIDDEN.findall(CONFIRM_FORM.search(html).group(0)))
    assert (fields["amount"], fields["reason"], fields["confirmed"]) == ("120.50", "Late", "y")
    assert refunds() == [] and reloaded(paid).status == "completed"


def test_the_confirmed_post_records_the_refund(as_staff, paid):
    response = refund(as_staff, paid, {"amount": "120.50"}, follow_redirects=True)
    assert "Refunded ৳ 120.50." in response.get_data(as_text=True)
    assert refunds() == [Decimal("120.50")]


def test_an_empty_amount_is_confirmed_as_the_remainder_it_stands_for(as_staff, paid):
    create_refund(paid.brand, paid.transaction.trx_id, Decimal("200.00"))
    response = post_form(as_staff, f"/panel/payments/{paid.public_id}/refund", {"amount": ""})
    assert "Refund ৳ 300.00 to Rahim Uddin (+8801712345678)?" in response.get_data(as_text=True)


def test_a_confirmation_overtaken_by_another_refund_is_refused_not_shrunk(as_staff, paid):
    first = post_form(as_staff, f"/panel/payments/{paid.public_id}/refund", {"amount": ""})
    fields = dict(HIDDEN.findall(CONFIRM_FORM.search(first.get_data(as_text=True)).group(0)))
    create_refund(paid.brand, paid.transaction.trx_id, Decimal("100.00"))  # a colleague, meanwhile

    response = as_staff.post(f"/panel/payments/{paid.public_id}/refund", data=fields)

    assert response.status_code == 422
    assert "Only 400.00 BDT remains refundable" in response.get_data(as_text=True)
    assert refunds() == [Decimal("100.00")]


def test_the_confirmation_names_the_number_that_paid_when_the_customer_is_unknown(as_staff, brand):
    payment = completed_payment(brand=brand, sender_number="01898765432")
    html = post_form(
        as_staff, f"/panel/payments/{payment.public_id}/refund", {"amount": "10"}
    ).get_data(as_text=True)
    assert "Refund ৳ 10.00 to 01898765432?" in html


@pytest.mark.parametrize("confirmed", ["", "y"], ids=["first-post", "confirmed-post"])
def test_both_steps_need_the_csrf_token(as_staff, paid, confirmed):
    response = as_staff.post(
        f"/panel/payments/{paid.public_id}/refund", data={"amount": "10.00", "confirmed": confirmed}
    )
    assert response.status_code == 400 and "Refund ৳ 10.00 to" not in response.get_data(
        as_text=True
    )
    wrong = as_staff.post(
        f"/panel/payments/{paid.public_id}/refund",
        data={"amount": "10.00", "confirmed": confirmed, "csrf_token": "forged"},
    )
    assert wrong.status_code == 400
    assert refunds() == []
