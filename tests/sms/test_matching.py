"""Matching SMS to claims, through the services: both orders, the amount rule, one SMS pays one
payment.
"""

from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.devices.models.notification import Notification
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.lifecycle import cancel_payment, expire_due_payments
from gateway.payments.models.payment import Transaction
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import match_sms_to_claim, submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.models.sms_template import SmsTemplate
from gateway.sms.settling import settle
from tests.factories import PaymentFactory, bkash_text, paired_device, reload, sms_message
from tests.factories import ingest as forward

TRX = "8N7A6B5C4D"


@pytest.fixture
def phone(brand):
    """A paired device of `brand` and its AES key."""
    device, _, aes_key = paired_device(brand)
    return device, aes_key


def transactions():
    return db.session.execute(db.select(Transaction)).scalars().all()


def test_sms_then_claim_completes_the_payment_at_submit(brand, phone):
    _, sms = forward(phone, bkash_text("500.00", TRX, "01712345678"))
    assert sms.status == "unmatched"
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))

    submit_claim(payment, "bkash", TRX.lower())

    payment, sms = reload(payment), reload(sms)
    assert payment.status == "completed"
    assert (payment.provider, payment.provider_trx_id, payment.sender_number) == (
        "bkash",
        TRX,
        "01712345678",
    )
    assert (sms.status, sms.payment_id) == ("matched", payment.id)
    [transaction] = transactions()
    assert (transaction.payment_id, transaction.provider_trx_id, transaction.amount) == (
        payment.id,
        TRX,
        Decimal("500.00"),
    )


def test_claim_then_sms_completes_the_payment_at_ingest(brand, phone):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", f"  {TRX.lower()} ")
    assert reload(payment).status == "processing"

    result, sms = forward(phone, bkash_text("500.00", TRX))

    assert result["status"] == "accepted"
    payment = reload(payment)
    assert payment.status == "completed"
    assert (sms.status, sms.payment_id) == ("matched", payment.id)
    assert len(transactions()) == 1


@pytest.mark.parametrize("sms_first", [True, False], ids=["sms-first", "claim-first"])
def test_wrong_amount_holds_the_payment_for_review(brand, phone, sms_first):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    if sms_first:
        _, sms = forward(phone, bkash_text("400.00", TRX))
        submit_claim(payment, "bkash", TRX)
    else:
        submit_claim(payment, "bkash", TRX)
        _, sms = forward(phone, bkash_text("400.00", TRX))

    payment, sms = reload(payment), reload(sms)
    assert payment.status == "processing"
    assert payment.review_reason == "SMS amount 400.00 differs from 500.00"
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert transactions() == []
    notice = db.session.execute(
        db.select(Notification).where(Notification.kind == "payment.review")
    ).scalar_one()
    assert (notice.title, notice.body) == (
        f"Payment {payment.reference} needs review",
        payment.review_reason,
    )


@pytest.mark.parametrize("sms_first", [True, False], ids=["sms-first", "claim-first"])
def test_wrong_provider_does_not_match(brand, phone, sms_first):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    if sms_first:
        _, sms = forward(phone, bkash_text("500.00", TRX))
        submit_claim(payment, "nagad", TRX)
    else:
        submit_claim(payment, "nagad", TRX)
        _, sms = forward(phone, bkash_text("500.00", TRX))

    assert reload(payment).status == "processing"
    assert (reload(sms).status, reload(sms).payment_id) == ("unmatched", None)
    assert transactions() == []


def test_sms_already_used_cannot_pay_a_second_payment(brand, phone):
    first = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    second = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    _, sms = forward(phone, bkash_text("500.00", TRX))
    submit_claim(first, "bkash", TRX)

    with pytest.raises(DomainError) as error:
        submit_claim(second, "bkash", TRX)

    assert (http_status(error.value), error.value.errors[0]["field"]) == (422, "provider_trx_id")
    assert reload(second).status == "created"
    assert reload(sms).payment_id == first.id
    assert match_sms_to_claim(reload(sms)) is None
    assert len(transactions()) == 1


def test_two_claims_of_one_trx_id_complete_only_one(brand, phone):
    """Claims that raced past the submit check: the earliest with the right amount wins, the other
    learns why.
    """
    now = utcnow()
    late = PaymentFactory(
        brand=brand, status="processing", provider="bkash", provider_trx_id=TRX, claimed_at=now
    )
    early = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id=TRX,
        claimed_at=now - timedelta(seconds=5),
    )

    forward(phone, bkash_text("500.00", TRX))

    early, late = reload(early), reload(late)
    assert (early.status, late.status) == ("completed", "processing")
    assert late.review_reason == f"TrxID {TRX} paid another payment ({early.public_id})"
    assert len(transactions()) == 1


def test_an_sms_a_rival_has_bound_cannot_be_settled_again(brand, phone):
    """Two writers that both read the SMS as unmatched: the guarded UPDATE lets only the first bind
    it.
    """
    _, sms = forward(phone, bkash_text("500.00", TRX))
    first, second = (
        PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id=TRX)
        for _ in range(2)
    )
    # What the slower writer read before the first one committed.
    stale = SimpleNamespace(
        **{
            c: getattr(sms, c)
            for c in (
                "id",
                "amount",
                "counterparty",
                "provider",
                "provider_trx_id",
                "payment_id",
                "status",
                "review_reason",
                "livemode",
                "printed_time",
            )
        }
    )

    assert settle(sms, first) == "matched"
    assert settle(stale, second) is None

    assert (reload(first).status, reload(second).status) == ("completed", "processing")
    assert reload(sms).payment_id == first.id
    assert len(transactions()) == 1


def test_same_sms_forwarded_twice_is_stored_once(brand, phone):
    device, aes_key = phone
    text = bkash_text("500.00", TRX)
    first = ingest_batch(device, [sms_message(aes_key, text, local_id="a1")])
    # Again later, and twice within one batch.
    again = ingest_batch(
        device,
        [sms_message(aes_key, text, local_id="a2"), sms_message(aes_key, text, local_id="a3")],
    )

    assert first[0]["status"] == "accepted"
    assert [r["status"] for r in again] == ["duplicate", "duplicate"]
    assert {r["server_ref"] for r in first + again} == {first[0]["server_ref"]}
    assert db.session.execute(db.select(db.func.count()).select_from(InboundSms)).scalar_one() == 1


def test_a_second_text_with_a_stored_trx_id_cannot_pay(brand, phone):
    _, original = forward(phone, bkash_text("500.00", TRX, balance="1500.00"))
    result, copy = forward(phone, bkash_text("5000.00", TRX, balance="9000.00"))
    payment = PaymentFactory(brand=brand, amount=Decimal("5000.00"))

    submit_claim(payment, "bkash", TRX)

    assert result["status"] == "duplicate"
    assert (copy.status, copy.provider_trx_id) == ("duplicate", None)
    assert copy.review_reason == f"TrxID {TRX} already received in SMS {original.public_id}"
    # The claim meets the original 500.00 text, not the 5000.00 copy.
    assert reload(payment).status == "processing"
    assert reload(original).status == "review"


def test_payment_expired_before_the_sms_arrives_is_not_completed(brand, phone):
    with freeze_time(utcnow()) as frozen:
        payment = PaymentFactory(
            brand=brand, amount=Decimal("500.00"), expires_at=utcnow() + timedelta(minutes=30)
        )
        submit_claim(payment, "bkash", TRX)
        frozen.tick(timedelta(minutes=31))
        expire_due_payments()

        _, sms = forward(phone, bkash_text("500.00", TRX))

    assert reload(payment).status == "expired"
    # Not completed, not lost: held on the expired payment for the merchant to complete or return.
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert reload(payment).review_reason == "Paid after the payment expired"
    assert transactions() == []


def test_late_sms_does_not_complete_a_payment_past_its_expiry_before_the_sweep(brand, phone):
    with freeze_time(utcnow()) as frozen:
        payment = PaymentFactory(
            brand=brand, amount=Decimal("500.00"), expires_at=utcnow() + timedelta(minutes=30)
        )
        submit_claim(payment, "bkash", TRX)
        frozen.tick(timedelta(minutes=31))

        _, sms = forward(phone, bkash_text("500.00", TRX))

    # The sweep's expiry happens at ingest (payment.expired sent), and the SMS waits for the
    # merchant on it.
    assert reload(payment).status == "expired"
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert transactions() == []


def test_cancelled_payment_is_not_completed_by_its_sms(brand, phone):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)
    cancel_payment(reload(payment))

    _, sms = forward(phone, bkash_text("500.00", TRX))

    assert reload(payment).status == "cancelled"
    assert (sms.status, sms.payment_id) == ("review", payment.id)
    assert transactions() == []


def test_claim_on_an_expired_payment_is_refused(brand):
    payment = PaymentFactory(brand=brand, expires_at=utcnow() - timedelta(seconds=1))

    with pytest.raises(DomainError) as error:
        submit_claim(payment, "bkash", TRX)

    assert error.value.code == "INVALID_STATE"
    assert reload(payment).status == "created"


@pytest.mark.parametrize(
    "provider, trx_id, field",
    [
        ("paypal", TRX, "provider"),
        ("bkash", "", "provider_trx_id"),
        ("bkash", "AB-12!", "provider_trx_id"),
        ("bkash", "X" * 40, "provider_trx_id"),
    ],
)
def test_malformed_claims_name_the_field(brand, provider, trx_id, field):
    payment = PaymentFactory(brand=brand)

    with pytest.raises(DomainError) as error:
        submit_claim(payment, provider, trx_id)

    assert (http_status(error.value), error.value.errors[0]["field"]) == (422, field)
    assert reload(payment).status == "created"


@pytest.mark.parametrize(
    "text, sender, status",
    [
        (
            "Send Money Tk 500.00 to 01812345678 successful. Fee Tk 0.00. Balance Tk "
            f"1,000.00. TrxID {TRX} at 01/01/2025 10:00",  # noqa: E501
            "bKash",
            "ignored",
        ),
        (
            "You have received Tk 500.00 from 01712345678. Fee Tk 0.00. Balance Tk "
            f"1,500.00. TrxID {TRX} at 01/01/2025 10:00",  # noqa: E501
            "01898765432",
            "ignored",
        ),
        ("Your bKash verification code is 123456. Do not share it.", "bKash", "ignored"),
        ("Hello, are we still meeting at six?", "01898765432", "unparsed"),
    ],
)
def test_texts_that_are_not_incoming_credits_are_stored_but_never_pay(
    brand, phone, text, sender, status
):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)

    result, sms = forward(phone, text, sender=sender)

    assert result["status"] == "accepted"
    assert (sms.status, sms.payment_id, sms.body) == (status, None, text)
    assert reload(payment).status == "processing"


def test_sender_number_that_differs_holds_the_payment_for_review(brand, phone):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX, sender_number="01899999999")

    _, sms = forward(phone, bkash_text("500.00", TRX, counterparty="01712345678"))

    payment = reload(payment)
    assert payment.status == "processing"
    assert (
        payment.review_reason
        == "SMS sender 01712345678 differs from the number entered, 01899999999"
    )
    assert sms.status == "review"


def test_sms_of_another_brand_does_not_pay(brand, other_brand):
    device, _, aes_key = paired_device(other_brand)
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)

    forward((device, aes_key), bkash_text("500.00", TRX))

    assert reload(payment).status == "processing"


def test_brand_template_reads_a_text_the_parsers_do_not_know(brand, phone):
    db.session.add(
        SmsTemplate(
            brand_id=brand.id,
            provider="upay",
            name="new upay format",
            # A template reads the balance too: a credit that prints none is held in strict mode.
            pattern=r"Credit BDT (?P<amount>[\d,.]+) ref (?P<trx_id>\w+) bal (?P<balance>[\d,.]+)",
        )
    )
    db.session.commit()
    payment = PaymentFactory(brand=brand, amount=Decimal("750.00"))
    submit_claim(payment, "upay", "UP12345678")

    _, trusted = forward(phone, "Credit BDT 750.00 ref UP12345678 bal 900.00 thanks", sender="upay")
    _, forged = forward(
        phone, "Credit BDT 750.00 ref UP99999999 bal 1650.00 thanks", sender="01712345678"
    )

    assert (trusted.provider, trusted.status) == ("upay", "matched")
    assert reload(payment).status == "completed"
    assert forged.status == "ignored"
