"""Bank methods: a listed bank's credit alert completes the one live bank claim of its amount, in
either order, when it is to one of the brand's bank methods (that bank's sender, that account as
far as it is printed); two claims of one amount, or another bank's alert, are left to the
merchant."""

from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.methods import add_account_method, update_method
from gateway.sms.bank_matching import submit_bank_claim
from gateway.sms.hand_matching import match_sms_by_hand
from tests.factories import PaymentFactory, forward_from, reload, shop_clock
from tests.webhook_support import receiver  # noqa: F401 - fixture

# Alerts printed today on the shop's clock (the Dutch-Bangla one an hour ago), so that they pay the
# claims the tests make now (sms/pays.py).
BRAC = (
    "Tk {amount} has been deposited to your A/C#130320**2001 on "
    f"{shop_clock():%d-%m-%y}. "
    "Your A/C balance is TK 68,370.27. For Enquiry call: 16221"
)


# The shop forwards 16216 for Rocket, so its own Dutch-Bangla account's alerts arrive too.
DUTCH_BANGLA = (
    "Dear Sir, your A/C ***123 credited (ATM A/C to A/C Transfer Credit) by Tk{amount} on "
    f"{shop_clock(timedelta(hours=1)):%d-%m-%Y %I:%M:%S %p} C/B Tk50,450.00. NexusPay "
    "https://bit.ly/nexuspay"
)


def brac_alert(brand, amount, account="130320**2001"):
    """A BRAC Bank credit alert forwarded by the shop's phone (to the method's account)."""
    text = BRAC.format(amount=amount).replace("130320**2001", account)
    return forward_from(brand, text, sender="BRAC BANK")


def dutch_bangla_alert(brand, amount):
    """A credit alert of the shop's Dutch-Bangla account (not a method), from 16216."""
    return forward_from(brand, DUTCH_BANGLA.format(amount=amount), sender="16216")


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


@pytest.mark.parametrize("alert_first", [False, True], ids=["claim first", "alert first"])
def test_another_bank_s_alert_does_not_pay_the_claim_and_is_left_for_hand_matching(
    brand, bank, alert_first
):
    payment = PaymentFactory(brand=brand, amount=Decimal("50000.00"))
    if alert_first:
        sms = dutch_bangla_alert(brand, "50,000.00")
    submit_bank_claim(payment, bank, "FT-77")
    if not alert_first:
        sms = dutch_bangla_alert(brand, "50,000.00")
    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)
    assert reload(payment).status == "processing"
    # The merchant, who knows the money reached that account, may still match it by hand.
    match_sms_by_hand(reload(sms), reload(payment))
    assert reload(payment).status == "completed"


@pytest.mark.parametrize("account", ["130320**2001", "XXXX2001", "1303**", "1303200002001"])
def test_the_method_s_bank_alert_pays_though_another_bank_s_alert_of_the_amount_waits(
    brand, bank, account
):
    payment = PaymentFactory(brand=brand, amount=Decimal("50000.00"))
    other = dutch_bangla_alert(brand, "50,000.00")
    sms = brac_alert(brand, "50,000.00", account=account)
    submit_bank_claim(payment, bank, "FT-77")
    assert reload(payment).status == "completed"
    assert (reload(sms).payment_id, reload(other).payment_id) == (payment.id, None)


@pytest.mark.parametrize("account", ["130320**2002", "XXXX9001", "***123", "1303200002011"])
@pytest.mark.parametrize("alert_first", [False, True], ids=["claim first", "alert first"])
def test_an_alert_to_another_account_of_the_method_s_bank_does_not_pay(
    brand, bank, account, alert_first
):
    payment = PaymentFactory(brand=brand, amount=Decimal("900.00"))
    if alert_first:
        sms = brac_alert(brand, "900.00", account=account)
    submit_bank_claim(payment, bank, "FT-9")
    if not alert_first:
        sms = brac_alert(brand, "900.00", account=account)
    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)
    assert reload(payment).status == "processing"


@pytest.mark.parametrize("alert_first", [False, True], ids=["claim first", "alert first"])
@pytest.mark.parametrize("sender", ["BRAC BANK", "16216"])
def test_a_method_of_a_bank_we_do_not_know_is_never_paid_automatically(brand, sender, alert_first):
    meghna = add_account_method(
        brand,
        "bank",
        bank_name="Meghna Bank",
        account_name="Shop Ltd",
        account_number="1303200002001",
    )
    text = (BRAC if sender == "BRAC BANK" else DUTCH_BANGLA).format(amount="750.00")
    payment = PaymentFactory(brand=brand, amount=Decimal("750.00"))
    if alert_first:
        sms = forward_from(brand, text, sender=sender)
    submit_bank_claim(payment, meghna, "FT-5")
    if not alert_first:
        sms = forward_from(brand, text, sender=sender)
    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)
    assert reload(payment).status == "processing"


def test_a_disabled_method_s_alerts_pay_nothing(brand, bank):
    add_account_method(
        brand,
        "bank",
        bank_name="Dutch-Bangla Bank",
        account_name="Shop Ltd",
        account_number="77123",
    )
    payment = PaymentFactory(brand=brand, amount=Decimal("600.00"))
    submit_bank_claim(payment, bank, "FT-6")
    update_method(bank, enabled=False)
    sms = brac_alert(brand, "600.00")
    assert (reload(sms).status, reload(payment).status) == ("unmatched", "processing")


def test_every_listed_bank_is_a_known_bank_with_sender_ids():
    from gateway.payments.methods import LISTED_BANKS
    from gateway.sms.senders import BANK_SENDERS, OFFICIAL_SENDERS, bank_of_name

    for name in LISTED_BANKS:
        assert BANK_SENDERS[bank_of_name(name)], name
    # One list: the bank senders are the official bank ids, in the same order.
    assert OFFICIAL_SENDERS["bank"] == tuple(i for ids in BANK_SENDERS.values() for i in ids)


@pytest.mark.parametrize(
    "name, bank",
    [
        ("dutch bangla bank plc", "Dutch-Bangla Bank"),
        ("DBBL", "Dutch-Bangla Bank"),
        ("BRAC BANK LTD.", "BRAC Bank"),
        ("The City Bank Ltd", "City Bank"),
        ("Citybank", "City Bank"),
        ("Islami Bank Bangladesh PLC", "Islami Bank"),
        ("Social Islami Bank", "Social Islami Bank"),
        ("EBL", "Eastern Bank"),
        ("Bank  Asia", "Bank Asia"),
        ("Meghna Bank", None),
        ("Bank", None),
        ("", None),
    ],
)
def test_a_method_s_bank_name_is_read_whatever_its_spelling(name, bank):
    from gateway.sms.senders import bank_of_name

    assert bank_of_name(name) == bank
