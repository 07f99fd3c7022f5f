"""Bank methods: a listed bank's credit alert completes the one live bank claim of its amount, in
either order; two claims of one amount are left to the merchant."""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.methods import add_account_method, update_method
from gateway.sms.bank_matching import submit_bank_claim
from gateway.sms.hand_matching import match_sms_by_hand
from tests.factories import PaymentFactory, forward_from, reload
from tests.webhook_support import receiver  # noqa: F401 - fixture

BRAC = (
    "Tk {amount} has been deposited to your A/C#130320**2001 on 23-03-22. "
    "Your A/C balance is TK 68,370.27. For Enquiry call: 16221"
)


def brac_alert(brand, amount):
    """A BRAC Bank credit alert forwarded by the shop's phone."""
    return forward_from(brand, BRAC.format(amount=amount), sender="BRAC BANK")


@pytest.fixture
def bank(brand):
    return add_account_method(
        brand,
        "bank",
        bank_name="BRAC Bank",
        account_name="Shop Ltd",
        account_number="1303200002001",
        bank_branch="Gulshan, routing 060261726",
    )


def test_the_alert_parses_as_a_bank_credit(brand):
    sms = brac_alert(brand, "1,250.00")
    assert (sms.provider, sms.incoming, sms.amount, sms.provider_trx_id) == (
        "bank",
        True,
        Decimal("1250.00"),
        None,
    )


def test_an_alert_completes_the_bank_claim_of_its_amount_with_the_webhook(
    app, brand, bank, receiver, monkeypatch
):
    monkeypatch.setitem(app.config, "JOBS_IN_PROCESS", True)
    payment = PaymentFactory(brand=brand, amount=Decimal("1250.00"), callback_url=receiver.url)
    submit_bank_claim(payment, bank, "FT-99812")
    assert (reload(payment).status, payment.provider, payment.provider_trx_id) == (
        "processing",
        "bank",
        "FT-99812",
    )
    sms = brac_alert(brand, "1,250.00")
    assert (reload(sms).status, sms.payment_id) == ("matched", payment.id)
    payment = reload(payment)
    assert payment.status == "completed"
    assert payment.transaction.provider == "bank"
    assert payment.transaction.provider_trx_id == "FT-99812"  # the customer's reference kept
    assert receiver.wait_for(1) and receiver.events()[0]["event"] == "payment.completed"


def test_an_alert_that_came_first_completes_the_claim_made_after_it(brand, bank):
    payment = PaymentFactory(brand=brand, amount=Decimal("900.00"))
    sms = brac_alert(brand, "900.00")
    assert reload(sms).status == "unmatched"
    submit_bank_claim(payment, bank, "my account 2001")
    assert reload(payment).status == "completed"
    assert reload(sms).payment_id == payment.id


def test_an_alert_of_another_amount_pays_nothing(brand, bank):
    payment = PaymentFactory(brand=brand, amount=Decimal("1250.00"))
    submit_bank_claim(payment, bank, "FT-99812")
    sms = brac_alert(brand, "1,200.00")
    assert reload(sms).status == "unmatched" and reload(payment).status == "processing"


def test_two_claims_of_one_amount_are_left_to_the_merchant(brand, bank):
    first = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    second = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_bank_claim(first, bank, "REF-1")
    submit_bank_claim(second, bank, "REF-2")
    sms = brac_alert(brand, "500.00")
    assert reload(sms).status == "unmatched"
    assert (reload(first).status, reload(second).status) == ("processing", "processing")
    # The merchant, who sees the reference on each, matches the alert to the right one by hand.
    match_sms_by_hand(reload(sms), reload(second))
    assert (reload(first).status, reload(second).status) == ("processing", "completed")
    assert reload(sms).payment_id == second.id


def test_a_wallet_claim_of_the_same_amount_is_never_paid_by_a_bank_alert(brand, bank):
    payment = PaymentFactory(brand=brand, amount=Decimal("700.00"))
    from gateway.sms.matching import submit_claim

    submit_claim(payment, "bkash", "BK12AB34CD")
    sms = brac_alert(brand, "700.00")
    assert reload(sms).status == "unmatched" and reload(payment).status == "processing"


def test_another_brands_alert_does_not_pay(brand, other_brand, bank):
    payment = PaymentFactory(brand=brand, amount=Decimal("650.00"))
    submit_bank_claim(payment, bank, "FT-1")
    brac_alert(other_brand, "650.00")
    assert reload(payment).status == "processing"


@pytest.mark.parametrize("reference", ["", "ab", "x" * 65, "FT\x00-1", "FT\ud800-1"])
def test_a_bank_claim_needs_a_reference(brand, bank, reference):
    from gateway.domain_errors import ValidationFailed

    payment = PaymentFactory(brand=brand)
    with pytest.raises(ValidationFailed) as caught:
        submit_bank_claim(payment, bank, reference)
    assert caught.value.errors[0]["field"] == "reference"
    db.session.rollback()
    assert reload(payment).status == "created"


def test_a_bank_alert_typed_on_a_personal_phone_pays_nothing(brand, bank):
    payment = PaymentFactory(brand=brand, amount=Decimal("800.00"))
    submit_bank_claim(payment, bank, "FT-2")
    sms = forward_from(brand, BRAC.format(amount="800.00"), sender="+8801712345678")
    assert reload(sms).status != "matched" and reload(sms).payment_id is None
    assert reload(payment).status == "processing"


@pytest.mark.parametrize("alert_first", [False, True], ids=["claim first", "alert first"])
def test_a_bank_method_s_fee_is_charged_with_the_claim_and_the_alert_brings_the_total(
    brand, bank, alert_first
):
    update_method(bank, fee_fixed="10", fee_percent="1")
    payment = PaymentFactory(brand=brand, amount=Decimal("1000.00"))
    if alert_first:
        early = brac_alert(brand, "1,020.00")
    submit_bank_claim(payment, bank, "FT-1020")
    assert (reload(payment).fee, payment.amount_paid) == (Decimal("20.00"), Decimal("1020.00"))
    if not alert_first:
        assert reload(brac_alert(brand, "1,000.00")).payment_id is None  # the bare amount: no
        early = brac_alert(brand, "1,020.00")
    assert reload(payment).status == "completed"
    assert reload(early).payment_id == payment.id
