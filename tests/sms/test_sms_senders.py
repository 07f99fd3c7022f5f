"""Exact official sender ids: every spoofed form from the audit is refused, listed case variants
pass.
"""

from decimal import Decimal

import pytest

from gateway.sms.parsing import parse_sms, sender_for, sender_provider
from gateway.sms.senders import OFFICIAL_SENDERS, is_official, official_provider
from tests.factories import PaymentFactory, bkash_text, forward, reload

BKASH_RECEIVE = (
    "You have received Tk 500.00 from 01711000101. Fee Tk 0.00. Balance Tk 1,500.00. "
    "TrxID BLU1H6X87P at 30/12/2024 13:22"
)
NAGAD_RECEIVE = (
    "Money Received.\nAmount: Tk 1195.00\nSender: 01781000201\nTxnID: 752C49K4\n"
    "Balance: Tk 1209.80\n14/03/2026 10:25"
)
ROCKET_RECEIVE = (
    "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 "
    "Date:27-DEC-25 08:43:52 pm."
)
UPAY_RECEIVE = (
    "Tk. 900.00 has been received from 01540000301. Ref-. Balance Tk. 900.00. "
    "TrxID 01K7C8Z24V at 12/10/2025 19:15"
)
BANK_CREDIT = (
    "Tk 38,740 has been deposited to your A/C#130320**2001 on 23-03-22. "
    "Your A/C balance is TK 68,370.27."
)

SPOOFED = {
    "greek capital kappa": ("b\u039aash", BKASH_RECEIVE),
    "cyrillic capital ka": ("b\u041aash", BKASH_RECEIVE),
    "kelvin sign": ("b\u212aash", BKASH_RECEIVE),
    "cyrillic small a": ("bK\u0430sh", BKASH_RECEIVE),
    "hyphen": ("b-Kash", BKASH_RECEIVE),
    "trailing dot": ("bKash.", BKASH_RECEIVE),
    "inner space": ("b Kash", BKASH_RECEIVE),
    "leading space": (" bKash", BKASH_RECEIVE),
    "trailing space": ("bKash ", BKASH_RECEIVE),
    "zero-width space": ("bKa\u200bsh", BKASH_RECEIVE),
    "zero-width joiner": ("b\u200dKash", BKASH_RECEIVE),
    "soft hyphen": ("bKa\u00adsh", BKASH_RECEIVE),
    "fullwidth letters": ("\uff42\uff2b\uff41\uff53\uff48", BKASH_RECEIVE),
    "underscore": ("bKash_", BKASH_RECEIVE),
    "apostrophe": ("bKash'", BKASH_RECEIVE),
    "extra word": ("bKash Support", BKASH_RECEIVE),
    "digit for letter": ("bKa5h", BKASH_RECEIVE),
    "greek nagad": ("\u039d\u0391G\u0391D", NAGAD_RECEIVE),
    "greek small alpha nagad": ("n\u03b1g\u03b1d", NAGAD_RECEIVE),
    "nagad trailing dot": ("NAGAD.", NAGAD_RECEIVE),
    "nagad hyphen": ("NA-GAD", NAGAD_RECEIVE),
    "bangla digits 16216": ("\u09e7\u09ec\u09e8\u09e7\u09ec", ROCKET_RECEIVE),
    "16216 with plus": ("+16216", ROCKET_RECEIVE),
    "16216 with space": ("16216 ", ROCKET_RECEIVE),
    "upay cyrillic": ("u\u0440ay", UPAY_RECEIVE),
    "upay dot": ("upay.", UPAY_RECEIVE),
    "unknown bank name": ("MY BANK", BANK_CREDIT),
    "bank look-alike": ("BR\u0410C BANK", BANK_CREDIT),
    "empty sender bank alert": ("", BANK_CREDIT),
}

ALLOWED = [
    ("bKash", "bkash", BKASH_RECEIVE),
    ("BKASH", "bkash", BKASH_RECEIVE),
    ("bkash", "bkash", BKASH_RECEIVE),
    ("NAGAD", "nagad", NAGAD_RECEIVE),
    ("Nagad", "nagad", NAGAD_RECEIVE),
    ("16216", "rocket", ROCKET_RECEIVE),
    ("upay", "upay", UPAY_RECEIVE),
    ("UPAY", "upay", UPAY_RECEIVE),
    ("BRAC BANK", "bank", BANK_CREDIT),
    ("brac bank", "bank", BANK_CREDIT),
    ("16216", "rocket", BANK_CREDIT),
]


@pytest.mark.parametrize("sender, text", SPOOFED.values(), ids=SPOOFED.keys())
def test_spoofed_sender_ids_name_no_provider_and_their_credits_never_pay(sender, text):
    assert official_provider(sender) is None
    parsed = parse_sms(sender, text)
    assert parsed.recognised  # kept and readable in the inbox ...
    assert parsed.incoming is False  # ... but never a credit that pays
    assert parsed.kind == "unverified_sender"


@pytest.mark.parametrize("sender, provider, text", ALLOWED)
def test_listed_sender_ids_in_any_letter_case_are_trusted(sender, provider, text):
    assert sender_provider(sender) == provider
    assert parse_sms(sender, text).incoming is True


@pytest.mark.parametrize("provider", ["bkash", "nagad", "rocket", "upay"])
def test_every_wallet_has_its_own_listed_sender(provider):
    assert is_official(sender_for(provider), provider)
    assert sender_for(provider) == OFFICIAL_SENDERS[provider][0]


def test_every_listed_sender_is_plain_ascii():
    for ids in OFFICIAL_SENDERS.values():
        assert all(sender.isascii() and sender == sender.strip() for sender in ids)


def test_a_wallet_credit_from_a_bank_sender_is_not_trusted():
    assert parse_sms("BRAC BANK", BKASH_RECEIVE).incoming is False


@pytest.mark.parametrize("sender", ["b\u039aash", "b-Kash", "bKash."])
def test_a_spoofed_credit_is_kept_in_review_with_its_reason_and_pays_nothing(brand, phone, sender):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    sms = forward(phone, bkash_text("500.00", "SPOOF12345"), sender=sender)
    from gateway.sms.matching import submit_claim

    submit_claim(payment, "bkash", "SPOOF12345")

    sms = reload(sms)
    assert sms.status == "review"
    assert sms.payment_id is None
    assert sms.provider_trx_id is None  # the real text can still take its TrxID
    assert "not an official sender id of bkash" in sms.review_reason
    assert reload(payment).status == "processing"


def test_a_spoofed_credit_cannot_take_a_waiting_claim_from_the_real_text(brand, phone):
    from gateway.sms.matching import submit_claim

    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", "SPOOF12345")

    spoofed = forward(phone, bkash_text("500.00", "SPOOF12345"), sender="b-Kash")
    assert (reload(spoofed).status, reload(spoofed).payment_id) == ("review", None)
    assert reload(payment).status == "processing"

    real = forward(phone, bkash_text("500.00", "SPOOF12345", balance="2000.00"))
    assert (reload(real).status, reload(payment).status) == ("matched", "completed")


def test_the_real_text_still_pays_after_a_spoofed_copy(brand, phone):
    from gateway.sms.matching import submit_claim

    forward(phone, bkash_text("500.00", "SPOOF12345"), sender="bKash.")
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", "SPOOF12345")

    real = forward(phone, bkash_text("500.00", "SPOOF12345", balance="2000.00"))

    assert reload(real).status == "matched"
    assert reload(payment).status == "completed"
