"""The method's fee at checkout: shown per method before the customer chooses, recorded with the
claim, and the SMS must bring the total (amount + fee) to complete the payment."""

import re
from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.models.inbound_sms import InboundSms
from tests.checkout_helpers import (  # noqa: F401 - fixtures
    THANKS,
    payment,
    reloaded,
    simulate_sms,
    submit_trx_id,
    text_of,
)
from tests.factories import PaymentFactory, PaymentMethodFactory


def fee_line(page, method):
    """The amount, fee and total shown in one method's summary, as plain text."""
    found = re.search(rf'data-method-fee="{method.id}">(.*?)<svg class="chevron"', page, re.S)
    assert found, f"no fee line for method {method.id}"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def test_each_method_shows_amount_fee_and_total_before_the_customer_chooses(client, brand, payment):
    bkash = PaymentMethodFactory(brand=brand, fee_percent=Decimal("1.85"))
    nagad = PaymentMethodFactory(
        brand=brand, provider="nagad", fee_fixed=Decimal("5"), fee_min=Decimal("12")
    )
    rocket = PaymentMethodFactory(brand=brand, provider="rocket")

    page = text_of(client.get(f"/checkout/{payment.token}"))

    assert fee_line(page, bkash) == "Amount ৳500.00 + Fee ৳9.25 = Send ৳509.25"
    assert fee_line(page, nagad) == "Amount ৳500.00 + Fee ৳12.00 = Send ৳512.00"
    assert fee_line(page, rocket) == "Amount ৳500.00 + Fee ৳0.00 = Send ৳500.00"
    # The steps and the label of each method ask for that method's total.
    assert "Enter the amount 509.25." in page and "Enter the amount 512.00." in page
    assert "Enter the amount 500.00." in page
    assert "Send ৳509.25 to this bKash number" in page


def test_the_claim_records_the_chosen_methods_fee_and_total(client, brand, payment):
    PaymentMethodFactory(brand=brand, provider="nagad", fee_fixed=Decimal("5"))
    bkash = PaymentMethodFactory(brand=brand, fee_percent=Decimal("1.85"))

    submit_trx_id(client, payment, bkash)

    stored = reloaded(payment)
    assert (stored.status, stored.amount, stored.fee, stored.amount_paid) == (
        "processing",
        Decimal("500.00"),
        Decimal("9.25"),
        Decimal("509.25"),
    )
    waiting = text_of(client.get(f"/checkout/{payment.token}/wait"))
    assert "<dd>৳9.25</dd>" in waiting and "<dd data-amount-paid>৳509.25</dd>" in waiting


def test_an_sms_with_the_total_completes_the_payment(client, runner, brand, payment):
    bkash = PaymentMethodFactory(brand=brand, number="01712345678", fee_percent=Decimal("1.85"))
    submit_trx_id(client, payment, bkash)

    simulate_sms(runner, "8N7A6B5C4D", amount="509.25")

    stored = reloaded(payment)
    assert (stored.status, stored.fee, stored.amount_paid) == (
        "completed",
        Decimal("9.25"),
        Decimal("509.25"),
    )
    assert stored.transaction.amount == Decimal("500.00")
    assert stored.transaction.fee == Decimal("9.25")
    assert client.get(f"/checkout/{payment.token}/wait").headers["Location"].startswith(THANKS)


def test_an_sms_with_only_the_bare_amount_goes_to_review(client, runner, brand, payment):
    bkash = PaymentMethodFactory(brand=brand, number="01712345678", fee_percent=Decimal("1.85"))
    submit_trx_id(client, payment, bkash)

    simulate_sms(runner, "8N7A6B5C4D", amount="500.00")

    stored = reloaded(payment)
    sms = db.session.execute(db.select(InboundSms)).scalar_one()
    assert stored.status == "processing" and stored.transaction is None
    assert "509.25" in (stored.review_reason or "")
    assert sms.status == "review"


def test_an_sms_already_here_with_the_total_completes_at_submit(client, runner, brand, payment):
    bkash = PaymentMethodFactory(brand=brand, number="01712345678", fee_fixed=Decimal("10"))
    simulate_sms(runner, "8N7A6B5C4D", amount="510.00")

    submit_trx_id(client, payment, bkash)

    assert (reloaded(payment).status, reloaded(payment).amount_paid) == (
        "completed",
        Decimal("510.00"),
    )


def test_a_correction_to_another_method_charges_that_methods_fee(client, brand, payment):
    bkash = PaymentMethodFactory(brand=brand, fee_percent=Decimal("2"))
    nagad = PaymentMethodFactory(brand=brand, provider="nagad", fee_fixed=Decimal("3"))
    submit_trx_id(client, payment, bkash)
    assert reloaded(payment).amount_paid == Decimal("510.00")
    page = text_of(client.get(f"/checkout/{payment.token}/wait"))
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)

    response = client.post(
        f"/checkout/{payment.token}/correct",
        data={"csrf_token": token, "method_id": nagad.id, "trx_id": "752C49K4"},
    )

    assert response.status_code == 303
    stored = reloaded(payment)
    assert (stored.provider, stored.fee, stored.amount_paid) == (
        "nagad",
        Decimal("3.00"),
        Decimal("503.00"),
    )


def test_a_payment_in_another_currency_without_a_rate_shows_no_fee_line(client, brand):
    brand.currencies = "BDT,USD"
    db.session.commit()
    PaymentMethodFactory(brand=brand, fee_percent=Decimal("2"))
    usd = PaymentFactory(brand=brand, currency="USD", amount=Decimal("10.00"))

    page = text_of(client.get(f"/checkout/{usd.token}"))

    assert "data-method-fee" not in page
    assert db.session.get(Payment, usd.id).amount_paid is None


def test_the_payment_and_transaction_reads_carry_the_fee(client, runner, brand, payment, auth):
    bkash = PaymentMethodFactory(brand=brand, number="01712345678", fee_fixed=Decimal("7.5"))
    submit_trx_id(client, payment, bkash)
    simulate_sms(runner, "8N7A6B5C4D", amount="507.50")
    trx_id = reloaded(payment).transaction.trx_id

    read = client.get(f"/api/v1/payments/{payment.public_id}", headers=auth).get_json()["data"]
    transaction = client.get(f"/api/v1/transactions/{trx_id}", headers=auth).get_json()["data"]

    assert (read["amount"], read["fee"], read["amount_paid"]) == ("500.00", "7.50", "507.50")
    assert (transaction["amount"], transaction["fee"]) == ("500.00", "7.50")


def test_a_second_claim_cannot_change_the_fee_of_a_claimed_payment(client, brand, payment):
    from gateway.domain_errors import InvalidState
    from gateway.sms.matching import submit_claim

    bkash = PaymentMethodFactory(brand=brand, fee_percent=Decimal("2"))
    submit_trx_id(client, payment, bkash)
    racing = db.session.get(Payment, payment.id)

    with pytest.raises(InvalidState):  # the guarded UPDATE finds it no longer created
        submit_claim(racing, "nagad", "752C49K4", fee=Decimal("50.00"))

    stored = reloaded(payment)
    assert (stored.provider, stored.fee, stored.amount_paid) == (
        "bkash",
        Decimal("10.00"),
        Decimal("510.00"),
    )
