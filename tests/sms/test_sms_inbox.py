"""The SMS inbox's rules without HTTP: matching a text by hand, ignoring one, naming the payment to
match.
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy.orm import Session

from gateway.clock import utcnow
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.models.payment import Transaction
from gateway.sms.hand_matching import match_sms_by_hand
from gateway.sms.inbox import (
    find_payment_to_match,
    get_inbound_sms,
    ignore_sms,
    list_inbound_sms_query,
    match_candidates,
    parser_reading,
)
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, forward, paired_device, reload

TRX = "8N7A6B5C4D"
ODD_TEXT = "Dear customer, Tk 500 reached your wallet. Ref QX77PL12 thanks"


def test_matching_an_unclaimed_credit_by_hand_completes_the_payment_with_the_sms_trxid(
    brand, phone
):
    sms = forward(phone, bkash_text("500.00", TRX, "01712345678"))
    payment = PaymentFactory(
        brand=brand, amount=Decimal("500.00"), callback_url="https://shop.example/hooks"
    )

    transaction = match_sms_by_hand(sms, payment)

    payment, sms = reload(payment), reload(sms)
    assert payment.status == "completed"
    assert (payment.provider, payment.provider_trx_id, payment.sender_number) == (
        "bkash",
        TRX,
        "01712345678",
    )
    assert (sms.status, sms.payment_id) == ("matched", payment.id)
    assert (transaction.payment_id, transaction.provider_trx_id) == (payment.id, TRX)
    assert db.session.execute(db.select(WebhookDelivery.event)).scalars().all() == [
        "payment.completed"
    ]


def test_a_claim_with_a_mistyped_trxid_is_completed_by_the_text_that_really_paid(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = submit_claim(PaymentFactory(brand=brand), "bkash", "WRONG12345")
    assert payment.status == "processing"

    match_sms_by_hand(sms, payment)

    assert (reload(payment).status, reload(payment).provider_trx_id) == ("completed", TRX)


def test_an_unparsed_text_can_be_matched_by_the_person_who_read_it(brand, phone):
    sms = forward(phone, ODD_TEXT)
    assert (sms.status, sms.amount) == ("unparsed", None)
    payment = PaymentFactory(brand=brand)

    match_sms_by_hand(sms, payment)

    assert reload(payment).status == "completed" and reload(sms).status == "matched"


@pytest.mark.parametrize("amount, currency", [("450.00", "BDT"), ("500.00", "USD")])
def test_a_text_for_another_amount_or_currency_cannot_pay_by_hand(brand, phone, amount, currency):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, amount=Decimal(amount), currency=currency)

    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, payment)

    assert (http_status(refused.value), refused.value.errors[0]["field"]) == (422, "payment")
    assert (reload(payment).status, reload(sms).status, reload(sms).payment_id) == (
        "created",
        "unmatched",
        None,
    )


@pytest.mark.parametrize("status", ["cancelled", "expired", "completed"])
def test_only_an_open_payment_can_be_matched_by_hand(brand, phone, status):
    sms = forward(phone, bkash_text("500.00", TRX))
    payment = PaymentFactory(brand=brand, status=status)

    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, payment)

    assert refused.value.code == "INVALID_STATE"
    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)
    assert db.session.execute(db.select(Transaction)).first() is None


def test_one_text_pays_one_payment_even_when_the_page_was_stale(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    first, second = PaymentFactory(brand=brand), PaymentFactory(brand=brand)
    # Another request read the text while it was still unmatched.
    with Session(db.engine) as other_request:
        stale = other_request.get(InboundSms, sms.id)
        match_sms_by_hand(sms, first)

        with pytest.raises(DomainError) as refused:
            match_sms_by_hand(stale, second)

    assert refused.value.code == "INVALID_STATE"
    assert (reload(first).status, reload(second).status) == ("completed", "created")


def test_a_payment_that_consumed_a_text_takes_no_second_one(brand, phone):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    held = submit_claim(payment, "bkash", TRX)
    forward(phone, bkash_text("450.00", TRX))  # held for review with this payment
    assert reload(held).review_reason
    # Its balance continues the first text's (1,500.00 + 500.00), so the balance chain lets it wait.
    other = forward(phone, bkash_text("500.00", "ZZ11YY22XX", balance="2000.00"))

    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(other, payment)

    assert refused.value.code == "INVALID_STATE"
    assert (reload(other).status, reload(payment).status) == ("unmatched", "processing")


def test_another_brands_payment_is_not_found(brand, other_brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    with pytest.raises(DomainError) as refused:
        match_sms_by_hand(sms, PaymentFactory(brand=other_brand))
    assert http_status(refused.value) == 404


def test_ignoring_a_text_sets_it_aside_and_it_can_then_pay_nothing(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    ignore_sms(sms)
    assert reload(sms).status == "ignored"
    with pytest.raises(DomainError):
        match_sms_by_hand(reload(sms), PaymentFactory(brand=brand))
    with pytest.raises(DomainError) as again:
        ignore_sms(reload(sms))
    assert again.value.code == "INVALID_STATE"


def test_a_matched_text_cannot_be_ignored(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    match_sms_by_hand(sms, PaymentFactory(brand=brand))
    with pytest.raises(DomainError):
        ignore_sms(reload(sms))
    assert reload(sms).status == "matched"


def test_the_payment_is_named_by_payment_id_or_by_an_open_payments_reference(brand, other_brand):
    payment = PaymentFactory(brand=brand, reference="ORDER-7")
    PaymentFactory(brand=brand, reference="ORDER-7", status="expired")
    assert find_payment_to_match(brand, payment.public_id.upper()) == payment
    assert find_payment_to_match(brand, " ORDER-7 ") == payment
    PaymentFactory(brand=other_brand, reference="ORDER-8")
    with pytest.raises(DomainError) as missing:
        find_payment_to_match(brand, "ORDER-8")
    assert missing.value.errors[0]["code"] == "not_found"


def test_two_open_payments_with_one_reference_need_the_payment_id(brand):
    PaymentFactory(brand=brand, reference="ORDER-9")
    PaymentFactory(brand=brand, reference="ORDER-9")
    with pytest.raises(DomainError) as ambiguous:
        find_payment_to_match(brand, "ORDER-9")
    assert ambiguous.value.errors[0]["code"] == "ambiguous"


def test_a_closed_payment_named_by_reference_is_refused_with_its_status(brand):
    PaymentFactory(brand=brand, reference="ORDER-10", status="cancelled")
    with pytest.raises(DomainError) as refused:
        find_payment_to_match(brand, "ORDER-10")
    assert http_status(refused.value) == 409 and "cancelled" in refused.value.message


def test_candidates_are_open_payments_of_the_same_amount_in_taka(brand, other_brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    fits = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    PaymentFactory(brand=brand, amount=Decimal("499.00"))
    PaymentFactory(brand=brand, amount=Decimal("500.00"), currency="USD")
    PaymentFactory(brand=brand, amount=Decimal("500.00"), status="cancelled")
    PaymentFactory(brand=other_brand, amount=Decimal("500.00"))
    assert match_candidates(sms) == [fits]


def test_the_inbox_lists_only_the_brands_texts_and_finds_them_by_trxid_or_words(
    brand, other_brand, phone
):
    credit = forward(phone, bkash_text("500.00", TRX))
    odd = forward(phone, ODD_TEXT, sender="01712345678")
    theirs = forward(paired_device(other_brand)[::2], bkash_text("500.00", "OT11HE22RS"))

    def listed(**filters):
        return db.session.execute(list_inbound_sms_query(brand, filters)).scalars().all()

    assert listed() == [odd, credit]
    assert listed(q=TRX.lower()) == [credit]
    assert listed(q="reached your") == [odd]
    assert listed(status="unparsed") == [odd]
    assert listed(provider="bkash") == [credit]
    with pytest.raises(DomainError):
        get_inbound_sms(brand, theirs.public_id)
    with pytest.raises(DomainError):
        get_inbound_sms(brand, "not-a-uuid")


def test_the_parser_reading_explains_why_a_text_was_ignored(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX), sender="01799999999")
    assert sms.status == "ignored"
    assert parser_reading(sms).kind == "forged"


def test_an_expired_but_unswept_payment_can_still_be_matched_by_hand(brand, phone):
    sms = forward(phone, bkash_text("500.00", TRX))
    late = PaymentFactory(brand=brand, expires_at=utcnow() - timedelta(minutes=1))
    match_sms_by_hand(sms, late)
    assert reload(late).status == "completed"
