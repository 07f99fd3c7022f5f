"""A text printed more than a day before its payment was created does not pay it by itself: the
TrxID of an old receipt (a text the phone forwards late) cannot pay a new order of its amount.
"""

from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.sms.bank_matching import submit_bank_claim
from gateway.sms.hand_matching import hand_match_differences, match_sms_by_hand
from gateway.sms.matching import submit_claim
from gateway.sms.parsing import build_sms_text
from gateway.sms.review import approve_review
from tests.factories import PaymentFactory, forward, forward_from, reload, shop_clock
from tests.sms.test_bank_methods import bank  # noqa: F401 - fixture

TRX = "8N7A6B5C4D"
BEFORE = "before the payment was created"
# BRAC Bank's credit alert, which prints a date alone ("on 23-03-22").
BRAC = (
    "Tk {amount} has been deposited to your A/C#130320**2001 on {day:%d-%m-%y}. "
    "Your A/C balance is TK 68,370.27. For Enquiry call: 16221"
)


def receipt(ago):
    """A real-format bKash credit of 500.00 with TRX, printed `ago` before now."""
    return build_sms_text(
        "bkash", Decimal("500.00"), TRX, "01712345678", Decimal("1500.00"), shop_clock(ago)
    )


def claimed(brand):
    """A payment of 500.00 whose customer claimed TRX."""
    return submit_claim(PaymentFactory(brand=brand, amount=Decimal("500.00")), "bkash", TRX)


@pytest.mark.parametrize("first", ["claim", "text"])
def test_a_receipt_printed_two_days_before_the_payment_is_held_for_review(brand, phone, first):
    if first == "text":
        sms = forward(phone, receipt(timedelta(days=2)))
        payment = claimed(brand)
    else:
        payment = claimed(brand)
        sms = forward(phone, receipt(timedelta(days=2)))

    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.transaction) == ("processing", None)
    assert BEFORE in payment.review_reason
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert BEFORE in sms.review_reason


def test_a_text_sent_three_hours_before_checkout_still_pays(brand, phone):
    sms = forward(phone, receipt(timedelta(hours=3)))

    payment = claimed(brand)

    assert (reload(payment).status, reload(sms).status) == ("completed", "matched")
    assert reload(sms).payment_id == payment.id


def bank_claim_and_alert(brand, bank, printed_days_ago):
    """A bank claim of 1,250.00 made now, and the BRAC alert of it printing the date of
    `printed_days_ago` days back; both reloaded."""
    payment = PaymentFactory(brand=brand, amount=Decimal("1250.00"))
    submit_bank_claim(payment, bank, "FT-99812")
    day = shop_clock(timedelta(days=printed_days_ago))
    sms = forward_from(brand, BRAC.format(amount="1,250.00", day=day), sender="BRAC BANK")
    return reload(payment), reload(sms)


def test_a_bank_alert_printing_yesterday_s_date_alone_pays_a_claim_made_today(brand, bank):
    """A date alone counts as the end of that day: within a day of the claim."""
    payment, sms = bank_claim_and_alert(brand, bank, printed_days_ago=1)

    assert (sms.status, sms.payment_id, payment.status) == ("matched", payment.id, "completed")


def test_a_bank_alert_printing_a_date_three_days_old_is_held_for_review(brand, bank):
    payment, sms = bank_claim_and_alert(brand, bank, printed_days_ago=3)

    assert (sms.status, sms.payment_id, payment.status) == ("review", payment.id, "processing")
    assert BEFORE in payment.review_reason


def test_the_merchant_approves_a_held_old_receipt_and_it_completes(brand, phone):
    payment = claimed(brand)
    sms = forward(phone, receipt(timedelta(days=2)))
    assert reload(payment).status == "processing"

    approve_review(reload(payment))  # the merchant checked the wallet: the money is new

    assert (reload(payment).status, reload(sms).status) == ("completed", "matched")
    assert reload(payment).transaction.provider_trx_id == TRX


def test_an_old_receipt_is_a_difference_only_an_owner_with_a_reason_matches_by_hand(brand, phone):
    sms = forward(phone, receipt(timedelta(days=2)))
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    [difference] = hand_match_differences(sms, payment)
    assert BEFORE in difference

    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, payment)
    assert (http_status(refused.value), refused.value.errors[0]["field"]) == (422, "payment")
    assert (reload(sms).status, reload(payment).status) == ("unmatched", "created")

    match_sms_by_hand(sms, payment, "Checked the bKash app: paid today", may_override=True)

    assert (reload(sms).status, reload(payment).status) == ("matched", "completed")
    assert reload(sms).review_reason == "Matched by hand: Checked the bKash app: paid today"
