"""The one matching rule: whether a stored SMS pays a payment, and if not, every reason why."""

from decimal import Decimal

import pytest

from gateway.payments.amounts import fix_amounts
from gateway.payments.models.payment import Payment
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.pays import sms_pays_payment


def text(**values):
    """An unsaved incoming bKash credit of 500.00 from 01712345678."""
    defaults = {
        "id": 7,
        "status": "unmatched",
        "payment_id": None,
        "provider": "bkash",
        "amount": Decimal("500.00"),
        "counterparty": "01712345678",
        "review_reason": None,
    }
    return InboundSms(**{**defaults, **values})


def payment(**values):
    """An unsaved processing payment of 500.00 BDT claimed with bKash."""
    defaults = {
        "id": 3,
        "status": "processing",
        "amount": Decimal("500.00"),
        "currency": "BDT",
        "provider": "bkash",
        "sender_number": None,
    }
    made = Payment(**{**defaults, **values})
    fix_amounts(made)  # as creation does: the taka total the text must equal
    return made


def test_a_credit_that_fits_its_claim_pays_it():
    verdict = sms_pays_payment(text(), payment(sender_number="+8801712345678"))
    assert (verdict.pays, verdict.reason, verdict.why()) == (True, None, None)


@pytest.mark.parametrize(
    "sms, pay, reason, why",
    [
        (
            text(amount=Decimal("400.00")),
            {},
            "amount_mismatch",
            "SMS amount 400.00 differs from 500.00",
        ),
        (text(amount=None), {}, "amount_unknown", "SMS amount unknown differs from 500.00"),
        (
            text(),
            {"currency": "USD"},
            "wrong_currency",
            "SMS amounts are in BDT; the payment is in USD with no rate",
        ),
        (
            text(),
            {"provider": "nagad"},
            "wrong_provider",
            "SMS is from bkash; the customer claimed nagad",
        ),
        (
            text(),
            {"sender_number": "01899999999"},
            "wrong_sender",
            "SMS sender 01712345678 differs from the number entered, 01899999999",
        ),
        (text(), {"status": "expired"}, "expired", "Paid after the payment expired"),
        (text(), {"status": "cancelled"}, "cancelled", "Paid after the payment was cancelled"),
        (text(payment_id=99), {}, "already_used", "SMS bound to another payment"),
        (
            text(status="review", review_reason="balance does not follow"),
            {},
            "held",
            "balance does not follow",
        ),
    ],
)
def test_each_reason_an_sms_does_not_pay(sms, pay, reason, why):
    verdict = sms_pays_payment(sms, payment(**pay))
    assert (verdict.pays, verdict.reason, verdict.why()) == (False, reason, why)


def test_every_reason_is_given_gravest_first():
    sms = text(status="review", review_reason="balance does not follow", amount=Decimal("450.00"))
    verdict = sms_pays_payment(sms, payment(status="expired", sender_number="01899999999"))
    assert [p.code for p in verdict.problems] == [
        "expired",
        "held",
        "amount_mismatch",
        "wrong_sender",
    ]
    assert verdict.why(first="Checked by hand").startswith(
        "Checked by hand; Paid after the payment expired; balance does not follow; SMS amount"
    )


def test_a_text_bound_to_this_payment_is_not_already_used():
    assert sms_pays_payment(text(payment_id=3, status="review"), payment()).pays
