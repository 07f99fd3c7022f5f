"""A credit from an official sender that prints no balance cannot be checked against its chain: held
for review in strict mode ("no balance printed"), completed but flagged in lenient mode."""

import json
from decimal import Decimal
from pathlib import Path

import pytest

from gateway.extensions import db
from gateway.sms.balance_chain import NO_BALANCE, link_of, set_chain_mode
from gateway.sms.matching import submit_claim
from gateway.sms.parsing import parse_sms
from gateway.sms.review import approve_review, reject_review
from tests.factories import PaymentFactory, forward, reload
from tests.sms.test_balance_chain import HOUR

# Pubali Bank's QR payment alert, verbatim from the real-format samples: it prints no balance.
PUBALI_QR = (
    "BDT 450.00 RECEIVED FROM 01700****00 ,bKash USING QR PAYMENT ON 05-SEP-24 .TrxID:AAAAAAAAAA."
)
# A bKash credit written as bKash writes it, without its Balance clause (printed at 5 past HOUR).
BKASH_NO_BALANCE = (
    "You have received Tk 300.00 from 01711000101. Fee Tk 0.00. TrxID NOBAL00001 at "
    f"{HOUR:%d/%m/%Y %H}:05"
)
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "sms_samples.jsonl"


def claim(brand, amount, provider, trx_id):
    return submit_claim(PaymentFactory(brand=brand, amount=Decimal(amount)), provider, trx_id)


def test_a_credit_without_a_balance_is_held_and_binds_the_waiting_claim(brand, phone):
    payment = claim(brand, "300.00", "bkash", "NOBAL00001")

    sms = forward(phone, BKASH_NO_BALANCE)

    payment, sms = reload(payment), reload(sms)
    assert (payment.status, payment.review_reason) == ("processing", NO_BALANCE)
    assert (sms.status, sms.payment_id, sms.review_reason) == ("review", payment.id, NO_BALANCE)
    link = link_of(sms)
    assert (link.status, link.held, link.before, link.after) == ("no_balance", True, None, None)
    # The merchant checked the wallet: approving completes it, as for any held credit.
    approve_review(payment)
    assert reload(payment).status == "completed"


def test_a_credit_without_a_balance_waits_for_the_claim_that_arrives_later(brand, phone):
    sms = forward(phone, BKASH_NO_BALANCE)
    assert (reload(sms).status, reload(sms).payment_id) == ("review", None)

    payment = claim(brand, "300.00", "bkash", "NOBAL00001")

    assert (reload(payment).status, reload(payment).review_reason) == ("processing", NO_BALANCE)
    assert reload(sms).payment_id == payment.id


def test_a_rejected_no_balance_credit_stays_held_so_no_later_claim_takes_it(brand, phone):
    payment = claim(brand, "300.00", "bkash", "NOBAL00001")
    sms = forward(phone, BKASH_NO_BALANCE)

    reject_review(reload(payment))

    assert (reload(sms).status, reload(sms).payment_id, reload(sms).review_reason) == (
        "review",
        None,
        NO_BALANCE,
    )
    again = claim(brand, "300.00", "bkash", "NOBAL00001")
    assert (reload(again).status, reload(again).review_reason) == ("processing", NO_BALANCE)


def test_a_real_bank_alert_without_a_balance_is_held_in_strict_mode(brand, phone):
    sms = forward(phone, PUBALI_QR, sender="PUBALI BANK")

    assert (reload(sms).provider, reload(sms).status, reload(sms).review_reason) == (
        "bank",
        "review",
        NO_BALANCE,
    )
    assert link_of(sms).status == "no_balance"


def test_lenient_mode_completes_a_credit_without_a_balance_and_flags_it(brand, phone):
    set_chain_mode(brand, "lenient")
    db.session.commit()
    payment = claim(brand, "300.00", "bkash", "NOBAL00001")

    sms = forward(phone, BKASH_NO_BALANCE)

    assert (reload(payment).status, reload(sms).status) == ("completed", "matched")
    link = link_of(sms)
    assert (link.status, link.held, link.note) == ("no_balance", False, NO_BALANCE)


def test_a_credit_without_a_balance_does_not_move_the_chain(brand, phone):
    from tests.sms.test_balance_chain import credit

    first = forward(phone, credit("500.00", "AAAA000001", "1500.00", 0))
    forward(phone, BKASH_NO_BALANCE)  # its 300.00 is unknown to the chain
    after = forward(phone, credit("200.00", "BBBB000002", "1700.00", 9))

    assert (link_of(first).status, link_of(after).status) == ("start", "verified")
    assert reload(after).status == "unmatched"


def test_a_spoofed_sender_without_a_balance_stays_held_for_its_sender_not_chained(brand, phone):
    sms = forward(phone, BKASH_NO_BALANCE, sender="bKash.")
    assert reload(sms).status == "review"
    assert "not an official sender id" in reload(sms).review_reason
    assert link_of(sms) is None


def real_samples():
    return [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line]


def test_every_real_credit_that_prints_a_balance_is_read_with_it():
    """Of the real-format credits, only the one that prints no balance reads as printing none."""
    unprinted = []
    for sample in real_samples():
        parsed = parse_sms(sample["sender"] or "", sample["text"])
        printed = sample["expected"]["balance"]
        assert (parsed.balance is None) == (printed is None), sample["text"]
        if parsed.incoming and parsed.balance is None:
            unprinted.append(sample["text"])
    assert unprinted == [PUBALI_QR]


@pytest.mark.parametrize(
    "clause",
    [
        "Balance Tk 1,500.00.",
        "Balance: Tk 1,500.00.",
        "Balance Tk: 1500.00.",
        "Balance(Tk) 1500.00.",
        "Balance - Tk 1500.00.",
        "Bal.: Tk 1500.00.",
        "Bal Tk1500.00.",
        "Available Balance Tk 1,500.00.",
        "Current Balance is Tk 1,500.00.",
        "New Balance: Tk. 1,500.00",
        "Balance BDT 1,500.00.",
        "Balance ৳1,500.00.",
        "Balance Tk ১,৫০০.০০.",
        "ব্যালেন্স ১৫০০.০০ টাকা।",
        "ব্যালান্স: টাকা ১,৫০০.০০।",
    ],
)
def test_a_printed_balance_is_read_whatever_its_label_and_separators(clause):
    text = (
        f"You have received Tk 500.00 from 01711000101. Fee Tk 0.00. {clause} TrxID ABCD123456 "
        "at 20/03/2026 10:00"
    )
    parsed = parse_sms("bKash", text)
    assert (parsed.incoming, parsed.amount, parsed.balance) == (
        True,
        Decimal("500.00"),
        Decimal("1500.00"),
    )


@pytest.mark.parametrize(
    "sender, text",
    [
        (
            "NAGAD",
            "Money Received.\nAmount: Tk 500.00\nSender: 01711000101\nTxnID: 7XYZ1234\n"
            "Balance: 1500.00\n20/03/2026 10:00",
        ),
        (
            "NAGAD",
            "Money Received.Amount: Tk 500.00Sender: 01711000101TxnID: 7XYZ1234Balance: Tk "
            "1500.0020/03/2026 10:00",
        ),
        (
            "16216",
            "Tk500.00 received from A/C:01711000101 Fee:Tk0, Your A/C Balance: Tk1,500.00 "
            "TxnId:1234567890 Date:20-MAR-26 10:00:00 am.",
        ),
        (
            "upay",
            "Tk. 500.00 has been received from 01711000101. Ref-. Current Balance: Tk. "
            "1500.00. TrxID ABCD1234 at 20/03/2026 10:00",
        ),
        (
            "BRAC BANK",
            "Your A/C 1501***001 has been credited by BDT 500.00 on 20-03-26. Avl Bal "
            "BDT 1,500.00.",
        ),
        ("DBBL", "A/C 123***456 credited BDT 500.00 on 20/03/2026. C/B BDT 1,500.00"),
        (
            "CITYBANK",
            "Your A/C xx1234 is credited with BDT 500.00 on 20-Mar-2026. Ledger Bal BDT "
            "1,500.00, Avail Bal BDT 1,500.00",
        ),
    ],
)
def test_every_providers_balance_wording_is_read(sender, text):
    parsed = parse_sms(sender, text)
    assert (parsed.incoming, parsed.balance) == (True, Decimal("1500.00"))


def test_a_negative_balance_is_not_read_as_a_positive_one():
    parsed = parse_sms(
        "bKash",
        "You have received Tk 500.00 from 01711000101. Balance: -50.00. TrxID ABCD123456 at "
        "20/03/2026 10:00",
    )
    assert parsed.balance is None


def test_the_companion_api_holds_a_credit_without_a_balance(client, brand):
    from tests.factories import paired_device, sms_message

    device, tokens, aes_key = paired_device(brand)
    payment = claim(brand, "300.00", "bkash", "NOBAL00001")

    answer = client.post(
        "/api/mobile/v1/sms",
        json={"messages": [sms_message(aes_key, BKASH_NO_BALANCE)]},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )

    assert answer.status_code == 200
    assert answer.get_json()["data"]["results"][0]["status"] == "accepted"
    assert (reload(payment).status, reload(payment).review_reason) == ("processing", NO_BALANCE)
