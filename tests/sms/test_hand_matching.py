"""Hand matching made safe: the automatic path's checks, a reason for any difference, owners and
admins only.
"""

from decimal import Decimal

import pytest

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.sms.hand_matching import hand_match_differences, match_sms_by_hand
from gateway.sms.matching import submit_claim
from tests.factories import PaymentFactory, bkash_text, forward, reload

TRX = "8N7A6B5C4D"


def test_a_text_that_fits_needs_no_reason(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    assert hand_match_differences(sms, payment) == []
    match_sms_by_hand(sms, payment)
    assert reload(payment).status == "completed"


def test_a_different_amount_without_the_right_to_override_is_refused_on_the_payment(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("450.00"))
    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, payment)
    assert (http_status(refused.value), refused.value.errors[0]["field"]) == (422, "payment")


def test_a_different_amount_with_a_reason_but_no_right_to_override_is_forbidden(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("450.00"))
    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, payment, "the customer tipped")
    assert (http_status(refused.value), refused.value.code) == (403, "NOT_PERMITTED")
    assert (reload(sms).status, reload(payment).status) == ("unmatched", "created")


def test_an_owner_must_still_give_a_reason(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("450.00"))
    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, payment, "   ", may_override=True)
    assert http_status(refused.value) == 422
    assert [e["field"] for e in refused.value.errors] == ["payment", "reason"]
    assert reload(sms).status == "unmatched"


def test_an_owner_with_a_reason_matches_a_different_amount(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("450.00"))
    match_sms_by_hand(sms, payment, "the customer tipped 50", may_override=True)
    assert (reload(sms).status, reload(payment).status) == ("matched", "completed")
    assert reload(sms).review_reason == "Matched by hand: the customer tipped 50"


def test_a_different_provider_counts_as_a_difference(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "nagad", "NG12345678")
    assert hand_match_differences(reload(sms), reload(payment)) == [
        "SMS is from bkash; the customer claimed nagad"
    ]


def test_another_currency_is_never_matched_even_by_an_owner(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"), currency="USD")
    with pytest.raises(DomainError):
        match_sms_by_hand(sms, payment, "rate", may_override=True)
    assert reload(payment).status == "created"


def test_a_spoofed_text_held_for_review_is_a_difference_an_owner_can_override(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX), sender="b-Kash")
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    [difference] = hand_match_differences(sms, payment)
    assert "not an official sender id" in difference
    with pytest.raises(DomainError):
        match_sms_by_hand(sms, payment)
    match_sms_by_hand(sms, payment, "Checked: the money is in the wallet", may_override=True)
    assert reload(payment).status == "completed"
