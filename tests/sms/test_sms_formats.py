"""Incoming-credit formats beyond the samples: multi-word Refs in every provider, bank apps,
cash-in, merchants.
"""

from decimal import Decimal

import pytest

from gateway.sms.parsing import parse_sms

REFS = [
    "Order 123 for shirt",
    "Tk 100 advance for 2 shirts",
    "Fee Tk 50 paid",
    "cash back Tk 5",
    "Payment of Tk 10.00 to shop",
    "sent from 01999999999",
    "Order#55, size L; thanks!",
    "Balance Tk 9.00 ok",
    "TrxID FAKE999999",
    "refund of loan, bonus or cashback",
    "Reversal: interest, reward",
]


def bkash(ref):
    return (
        f"You have received Tk 1,000.00 from 01711000101. Ref {ref}. Fee Tk 0.00. "
        "Balance Tk 2,000.00. TrxID ABC1234567 at 01/01/2025 10:00"
    )


def nagad(ref):
    return (
        f"Money Received.\nAmount: Tk 1000.00\nSender: 01711000101\nRef: {ref}\nTxnID: ABC1234567\n"
        "Balance: Tk 2000.00\n01/01/2025 10:00"
    )


def nagad_flat(ref):
    return (
        f"Money Received. Amount: Tk 1000.00 Sender: 01711000101 Ref: {ref} TxnID: ABC1234567 "
        "Balance: Tk 2000.00 01/01/2025 10:00"
    )


def rocket(ref):
    return (
        f"Tk1,000.00 received from A/C:01711000101 Ref:{ref} Fee:Tk0, Your A/C Balance: Tk2,000.00 "
        "TxnId:ABC1234567 Date:01-JAN-25 10:00:00 am."
    )


def upay(ref):
    return (
        f"Tk. 1000.00 has been received from 01711000101. Ref-{ref}. Balance Tk. 2000.00. "
        "TrxID ABC1234567 at 01/01/2025 10:00"
    )


FORMATS = {
    "bkash": ("bKash", bkash),
    "nagad": ("NAGAD", nagad),
    "nagad-flattened": ("NAGAD", nagad_flat),
    "rocket": ("16216", rocket),
    "upay": ("upay", upay),
}


@pytest.mark.parametrize("ref", REFS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_multi_word_ref_changes_nothing_the_text_says(fmt, ref):
    sender, build = FORMATS[fmt]
    parsed = parse_sms(sender, build(ref))
    assert (parsed.kind, parsed.incoming) == ("receive", True)
    assert (parsed.amount, parsed.balance) == (Decimal("1000.00"), Decimal("2000.00"))
    assert (parsed.trx_id, parsed.counterparty) == ("ABC1234567", "01711000101")
    if fmt in ("bkash", "rocket"):  # they print their own fee after the Ref: that one counts
        assert parsed.fee == Decimal("0.00")


@pytest.mark.parametrize(
    "word, kind",
    [("refund", "refund"), ("cashback", "cashback"), ("bonus", "reward"), ("loan", "loan")],
)
@pytest.mark.parametrize("fmt", ["bkash", "rocket", "upay"])
def test_why_money_came_counts_in_the_providers_words_never_in_the_ref(fmt, word, kind):
    sender, build = FORMATS[fmt]
    typed = parse_sms(sender, build(word))
    said = parse_sms(sender, build("Order 5").replace("01711000101", f"01711000101 as {word}", 1))
    assert (typed.kind, typed.incoming) == ("receive", True)
    assert (said.kind, said.incoming) == (kind, False)
    assert (said.amount, said.trx_id) == (Decimal("1000.00"), "ABC1234567")


CREDITS = [
    pytest.param(
        "bKash",
        "You have received deposit from iBanking of Tk 5,000.00 from City Bank. Fee Tk 0.00. "
        "Balance Tk 5,060.00. TrxID ABC1234568 at 01/01/2025 10:00",
        ("deposit_received", "5000.00", "ABC1234568", "City Bank", "5060.00"),
        id="bkash-from-a-bank-app",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 5,000.00 from Dutch Bangla Bank Limited. Ref Fund transfer. "
        "Fee Tk 0.00. Balance Tk 5,060.00. TrxID ABC1234569 at 01/01/2025 10:00",
        ("receive", "5000.00", "ABC1234569", "Dutch Bangla Bank Limited", "5060.00"),
        id="bkash-bank-transfer-as-receive",
    ),
    pytest.param(
        "bKash",
        "You have received payment Tk 1,000.00 from 01711000101. Ref Order 123 for shirt, size L. "
        "Fee Tk 0.00. Balance Tk 2,000.00. TrxID ABC1234570 at 01/01/2025 10:00",
        ("payment_received", "1000.00", "ABC1234570", "01711000101", "2000.00"),
        id="bkash-merchant-payment-with-ref",
    ),
    pytest.param(
        "bKash",
        "Cash In Tk 1,000.00 from 01933000103 successful. Ref Order 9 for two shirts. Fee Tk 0.00. "
        "Balance Tk 1,607.90. TrxID CK710WRNDC at 07/11/2025 22:21",
        ("cash_in_received", "1000.00", "CK710WRNDC", "01933000103", "1607.90"),
        id="bkash-cash-in-with-ref",
    ),
    pytest.param(
        "bKash",
        "You have received remittance of Tk 10,000.00 from Western Union. Fee Tk 0.00. "
        "Balance Tk 10,500.00. TrxID ABC1234571 at 01/01/2025 10:00",
        ("remittance_received", "10000.00", "ABC1234571", "Western Union", "10500.00"),
        id="bkash-remittance",
    ),
    pytest.param(
        "NAGAD",
        "Money Received.\nAmount: Tk 2000.00\nSender: Dutch-Bangla Bank PLC\nRef: Bank to Nagad\n"
        "TxnID: 7ABCDEF2\nBalance: Tk 3500.00\n20/03/2026 10:05",
        ("receive", "2000.00", "7ABCDEF2", "Dutch-Bangla Bank PLC", "3500.00"),
        id="nagad-from-a-bank-app",
    ),
    pytest.param(
        "NAGAD",
        "Payment Received.\nAmount: Tk 50.00\nCustomer: 01966000106\nRef: Order 77 blue mug\n"
        "TxnID: 74HNEK08\nBalance: Tk 247.78\n20/10/2025 17:58",
        ("payment_received", "50.00", "74HNEK08", "01966000106", "247.78"),
        id="nagad-merchant-payment-with-ref",
    ),
    pytest.param(
        "NAGAD",
        "Money Received.Amount: Tk 500.00Sender: 01711000101Ref: Order 123 for shirtTxnID: 7ABCDEF1"
        "Balance: Tk 1500.0020/03/2026 10:00",
        ("receive", "500.00", "7ABCDEF1", "01711000101", "1500.00"),
        id="nagad-glued-with-multi-word-ref",
    ),
    pytest.param(
        "16216",
        "Cash In Tk1,000.00 from A/C:01711000101 Fee:Tk0, Your A/C Balance: Tk2,500.00 "
        "TxnId:1234567892 Date:20-MAR-26 10:05:00 am.",
        ("cash_in_received", "1000.00", "1234567892", "01711000101", "2500.00"),
        id="rocket-cash-in",
    ),
    pytest.param(
        "16216",
        "Tk2,000.00 received from DBBL A/C:1234****5678 Ref:Fund transfer Fee:Tk0, Your "
        "A/C Balance: Tk4,500.00 TxnId:1234567893 Date:20-MAR-26 10:10:00 am.",
        ("receive", "2000.00", "1234567893", "DBBL A/C:1234****5678", "4500.00"),
        id="rocket-from-the-bank",
    ),
    pytest.param(
        "16216",
        "Tk500.00 received from A/C:01711000101 Ref No: Order 123 for shirt Fee: Tk.00 NetBal: "
        "Tk1500.00 TxnId: 1234567891 Date:20-MAR-26 10:00:00 am.",
        ("receive", "500.00", "1234567891", "01711000101", "1500.00"),
        id="rocket-ref-no-multi-word",
    ),
    pytest.param(
        "upay",
        "Cash In of Tk. 1000.00 from 01576000302 is successful. Balance Tk. 2500.00. "
        "TrxID 01JYG4GET9 at 24/06/2025 10:52.",
        ("cash_in_received", "1000.00", "01JYG4GET9", "01576000302", "2500.00"),
        id="upay-cash-in",
    ),
    pytest.param(
        "upay",
        "You have received payment of Tk. 250.00 from 01576000303. Ref-Order 5 for tea. "
        "Balance Tk. 2750.00. TrxID 01JYG4GEA1 at 24/06/2025 11:52.",
        ("payment_received", "250.00", "01JYG4GEA1", "01576000303", "2750.00"),
        id="upay-merchant-payment",
    ),
    pytest.param(
        "upay",
        "Tk. 3000.00 has been received from City Bank. Ref-Fund transfer. Balance Tk. 5750.00. "
        "TrxID 01JYG4GEA2 at 24/06/2025 12:52",
        ("receive", "3000.00", "01JYG4GEA2", "City Bank", "5750.00"),
        id="upay-from-a-bank-app",
    ),
]


@pytest.mark.parametrize("sender, text, expected", CREDITS)
def test_real_incoming_credit_formats_are_read(sender, text, expected):
    parsed = parse_sms(sender, text)
    kind, amount, trx_id, counterparty, balance = expected
    assert parsed.incoming is True
    assert (parsed.kind, parsed.amount, parsed.trx_id) == (kind, Decimal(amount), trx_id)
    assert (parsed.counterparty, parsed.balance) == (counterparty, Decimal(balance))


@pytest.mark.parametrize(
    "sender, text",
    [
        (
            "16216",
            "Cash In Tk1,000.00 to A/C:01711000101 Comm:Tk4.10 Your A/C Balance: Tk2,500.00 "
            "TxnId:1234567894 Date:20-MAR-26 10:05:00 am.",
        ),
        (
            "upay",
            "Cash In of Tk. 1000.00 to 01576000302 is successful. Balance Tk. 2500.00. "
            "TrxID 01JYG4GEA9 at 24/06/2025 10:52.",
        ),
    ],
    ids=["rocket-agent-cash-in-given", "upay-agent-cash-in-given"],
)
def test_an_agents_cash_in_given_is_money_out(sender, text):
    parsed = parse_sms(sender, text)
    assert (parsed.kind, parsed.incoming) == ("cash_in_sent", False)


def test_the_fee_is_the_providers_not_one_in_the_ref():
    text = (
        "Send Money Tk 510.00 to 01644000104 successful. Ref Fee Tk 99 for you. Fee Tk 5.00. "
        "Balance Tk 4,479.65. TrxID DCK1B9P81H at 20/03/2026 00:08"
    )
    assert parse_sms("bKash", text).fee == Decimal("5.00")
