"""SMS parsing: every real sample, the trust rules for credits, format variations, templates, round
trips, fuzzing.
"""

import json
import re
import time
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gateway.sms.parsing as sms
from gateway.sms.balance_chain import CREDIT_KINDS, DEBIT_KINDS
from gateway.sms.parsing import (
    ParsedSms,
    build_sms_text,
    parse_amount,
    parse_sms,
    parse_with_template,
    sender_for,
    sender_provider,
    validate_template,
)

SAMPLES_PATH = Path(__file__).resolve().parents[1] / "data" / "sms_samples.jsonl"
# The shared original the copy above is taken from, beside the repository (absent outside the
# workspace).
SHARED_SAMPLES_PATH = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "sms" / "samples.jsonl"
)
SAMPLES = [
    json.loads(line)
    for line in SAMPLES_PATH.read_text(encoding="utf-8").splitlines()
    if line.strip()
]
PROVIDERS = ("bkash", "nagad", "rocket", "upay")
# No example database: the test run must not leave files in the working tree.
FUZZ = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def sample_id(sample):
    """A readable test id: line number, provider and kind."""
    index = SAMPLES.index(sample) + 1
    return f"{index:02d}-{sample['provider']}-" + re.sub(
        r"[^a-z0-9]+", "_", sample["kind"].lower()
    ).strip("_")


def parse_sample(sample):
    """The sample parsed with its sender as the phone showed it (none given counts as empty)."""
    return parse_sms(sample["sender"] or "", sample["text"])


def decimal_or_none(value):
    """The expected sum as a Decimal (samples print them as strings without separators)."""
    return None if value is None else Decimal(value)


def fields(parsed):
    """The extracted fields of a ParsedSms, keyed like a sample's `expected`."""
    return {
        "amount": parsed.amount,
        "trx_id": parsed.trx_id,
        "counterparty": parsed.counterparty,
        "fee": parsed.fee,
        "balance": parsed.balance,
        "time": parsed.printed_time,
    }


BKASH_RECEIVE = (
    "You have received Tk 5,075.00 from 01711000101. Fee Tk 0.00. Balance Tk 6,075.50. "
    "TrxID BLU1H6X87P at 30/12/2024 13:22"
)
NAGAD_RECEIVE = (
    "Money Received.\nAmount: Tk 1195.00\nSender: 01781000201\nRef: rana\nTxnID: 752C49K4\n"
    "Balance: Tk 1209.80\n14/03/2026 10:25"
)


# --- every real sample
# -------------------------------------------------------------------------------------


def test_samples_file_is_a_faithful_copy():
    """Guard the fixture itself: every line has the documented keys."""
    assert len(SAMPLES) >= 46
    for sample in SAMPLES:
        assert {"provider", "sender", "kind", "text", "expected", "incoming"} <= set(sample)


@pytest.mark.parametrize("sample", SAMPLES, ids=sample_id)
def test_sample_is_parsed_to_its_expected_fields(sample):
    parsed = parse_sample(sample)
    expected = dict(sample["expected"])
    for name in ("amount", "fee", "balance"):
        expected[name] = decimal_or_none(expected[name])
    assert fields(parsed) == expected


@pytest.mark.parametrize("sample", SAMPLES, ids=sample_id)
def test_sample_incoming_flag_is_right(sample):
    # A sample whose sender id was not recorded is a credit only once a listed sender vouches for
    # it.
    if not sample["sender"] and sample["incoming"]:
        assert parse_sample(sample).kind == "unverified_sender"
        assert parse_sms("RUPALI BANK", sample["text"]).incoming is True
        return
    assert parse_sample(sample).incoming is sample["incoming"]


@pytest.mark.parametrize("sample", SAMPLES, ids=sample_id)
def test_sample_is_recognised_as_its_provider(sample):
    parsed = parse_sample(sample)
    assert parsed.recognised
    assert parsed.provider == ("bank" if sample["provider"] == "other" else sample["provider"])


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s["expected"]["amount"]], ids=sample_id)
def test_sample_amounts_are_two_place_decimals(sample):
    parsed = parse_sample(sample)
    assert isinstance(parsed.amount, Decimal) and parsed.amount.as_tuple().exponent == -2


# --- what may and may not pay
# ------------------------------------------------------------------------------


def test_cashback_is_not_an_incoming_payment():
    parsed = parse_sms(
        "bKash",
        "Congratulations! You have received Cashback Tk 1.00. Balance Tk 91,950.74. "
        "TrxID AC889WE2G0 at 08/03/2023 10:50",
    )
    assert (parsed.kind, parsed.incoming, parsed.counterparty) == ("cashback", False, None)


def test_loan_notice_is_not_an_incoming_payment_and_carries_no_fields():
    parsed = parse_sms(
        "bKash",
        "You have received Loan of Tk 900.00 from City Bank in your bKash Account. "
        "Your first repayment of TK 309.28 is due on 28/09/2026.",
    )
    assert parsed == ParsedSms(provider="bkash", kind="loan", recognised=True)


def test_failed_send_refund_is_not_incoming():
    parsed = parse_sms(
        "bKash",
        "Sorry, your Send Money request to 01755000105 is unsuccessful! Tk 30 has been "
        "returned. Balance Tk 73.50. TrxID BKA96AB813 at 10/11/2024 14:00",
    )
    assert (parsed.kind, parsed.incoming, parsed.amount) == ("refund", False, Decimal("30.00"))


def test_a_reward_is_not_incoming():
    parsed = parse_sms(
        "bKash",
        "You have received a reward of Tk 50.00. Balance Tk 150.00. TrxID AB12CD34EF at "
        "01/01/2025 10:00",
    )
    assert (parsed.kind, parsed.incoming) == ("reward", False)


def test_outgoing_send_money_is_not_incoming():
    parsed = parse_sms(
        "bKash",
        "Send Money Tk 510.00 to 01644000104 successful. Ref Karim. Fee Tk 5.00. "
        "Balance Tk 4,479.65. TrxID DCK1B9P81H at 20/03/2026 00:08",
    )
    assert (parsed.kind, parsed.incoming, parsed.fee) == ("send", False, Decimal("5.00"))


def test_agent_cash_in_to_a_customer_is_money_out():
    parsed = parse_sms(
        "bKash",
        "Cash In Tk 2,000.00 to 01866000114 successful. Fee Tk 0.00. Balance Tk 2,851.16. "
        "TrxID AC829VTZTE at 08/03/2023 10:37",
    )
    assert (parsed.kind, parsed.incoming) == ("cash_in_sent", False)


def test_agent_cash_out_from_a_customer_is_money_in():
    parsed = parse_sms(
        "bKash",
        "Cash Out Tk 785.00 from 01855000113 successful. Fee Tk 0.00. Balance Tk 121,710.33. "
        "TrxID AA24AJJH6I at 02/01/2023 22:05",
    )
    assert (parsed.kind, parsed.incoming) == ("cash_out_received", True)


@pytest.mark.parametrize(
    "text",
    [
        "Your bKash verification code is 521328. The code will expire in 2 minutes.",
        "1234 is your One-Time-Password (OTP) for upay. This OTP will be valid for 60 seconds.",
    ],
)
def test_otp_is_recognised_without_fields_and_never_incoming(text):
    parsed = parse_sms("bKash", text)
    assert (parsed.kind, parsed.incoming, parsed.recognised) == ("otp", False, True)
    assert parsed.amount is None and parsed.trx_id is None


def test_promotion_from_a_provider_is_a_recognised_non_payment():
    parsed = parse_sms("NAGAD", "Enjoy 20% discount on your next bill! Click nagad.io/offer")
    assert (parsed.provider, parsed.kind, parsed.incoming, parsed.recognised) == (
        "nagad",
        "promotion",
        False,
        True,
    )


def test_forged_nagad_text_is_not_incoming_even_when_relabelled_as_nagad():
    forged = (
        "Cash Out ReceivedAmount: Tk 1000.00Customer:01633000210TxnID:7200XCJBComm: Tk 04.10"
        "Balance: Tk 65981.1025/06/2023 17:25"
    )
    parsed = parse_sms("NAGAD", forged)
    assert (parsed.kind, parsed.incoming, parsed.trx_id) == ("forged", False, "7200XCJB")


def test_genuine_nagad_cash_out_received_by_an_agent_is_incoming():
    text = (
        "Cash Out Received.\nAmount: Tk 1000.00\nCustomer: 01633000210\nTxnID: "
        "7200XCJB\nComm: Tk 4.10\nBalance: Tk 65981.10\n25/06/2023 17:25"
    )
    parsed = parse_sms("NAGAD", text)
    assert (parsed.kind, parsed.incoming, parsed.fee) == ("cash_out_received", True, None)


@pytest.mark.parametrize("sender", ["01711000999", "+8801711000999", "+880 1711-000999"])
def test_provider_credit_from_a_personal_number_is_forged(sender):
    parsed = parse_sms(sender, BKASH_RECEIVE)
    assert (parsed.provider, parsed.kind, parsed.incoming) == ("bkash", "forged", False)
    assert parsed.trx_id == "BLU1H6X87P"


@pytest.mark.parametrize("sender", ["", "Unknown", "bKash Support"])
def test_provider_credit_from_an_unknown_sender_is_read_but_not_trusted(sender):
    parsed = parse_sms(sender, "bKash\n" + BKASH_RECEIVE)
    assert (parsed.provider, parsed.kind, parsed.incoming, parsed.recognised) == (
        "bkash",
        "unverified_sender",
        False,
        True,
    )
    assert parsed.amount == Decimal("5075.00")


def test_credit_in_another_providers_format_is_not_read_as_the_senders():
    parsed = parse_sms("bKash", NAGAD_RECEIVE)
    assert (parsed.provider, parsed.incoming, parsed.recognised) == ("bkash", False, False)


def test_a_bank_alert_sent_from_a_personal_number_is_forged():
    parsed = parse_sms(
        "01711000999",
        "BDT 450.00 RECEIVED FROM 01700****00 ,bKash USING QR PAYMENT ON 05-SEP-24 "
        ".TrxID:AAAAAAAAAA. Your A/C is credited.",
    )
    assert parsed.incoming is False


def test_a_ref_cannot_inject_a_fake_trx_id():
    text = (
        "You have received Tk 10.00 from 01711000101. Ref TrxID FAKE123456. Fee Tk 0.00. "
        "Balance Tk 20.00. TrxID REAL123456 at 30/12/2024 13:22"
    )
    assert parse_sms("bKash", text).trx_id == "REAL123456"


def test_a_ref_cannot_turn_a_payment_into_a_cashback_or_back():
    text = (
        "You have received Tk 10.00 from 01711000101. Ref cashback Tk 5. Fee Tk 0.00. "
        "Balance Tk 20.00. "
        "TrxID REAL123456 at 30/12/2024 13:22"
    )
    parsed = parse_sms("bKash", text)
    assert (parsed.kind, parsed.incoming, parsed.amount) == ("receive", True, Decimal("10.00"))


# Money in that no customer paid, worded amount first: the reason follows the amount, so the
# earliest trigger alone reads an ordinary receive. Amount and TrxID stay, for the balance chain.
AMOUNT_FIRST_NOT_A_PAYMENT = [
    pytest.param(
        "bKash",
        "You have received Tk 50.00 as cashback. Balance Tk 550.00. TrxID BLU1H6X87P at "
        "30/12/2024 13:22",
        ("cashback", "50.00", None),
        id="bkash-as-cashback",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 50.00 cashback for Payment to Daraz. Balance Tk 550.00. TrxID "
        "BLU1H6X87P at 30/12/2024 13:22",
        ("cashback", "50.00", None),
        id="bkash-cashback-for-a-payment",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 50.00 bonus. Balance Tk 550.00. TrxID BLU1H6X87P at 30/12/2024 13:22",
        ("reward", "50.00", None),
        id="bkash-bonus",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 50.00 as reward. Balance Tk 550.00. TrxID BLU1H6X87P at "
        "30/12/2024 13:22",
        ("reward", "50.00", None),
        id="bkash-as-reward",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 900.00 loan from City Bank. Balance Tk 950.00. TrxID "
        "BLU1H6X87P at 30/12/2024 13:22",
        ("loan", "900.00", None),
        id="bkash-loan",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 500.00 from 01711000101 as refund of unsuccessful Send Money. "
        "Balance Tk 1,000.00. TrxID BLU1H6X87P at 30/12/2024 13:22",
        ("refund", "500.00", "01711000101"),
        id="bkash-failed-send-refund",
    ),
    pytest.param(
        "bKash",
        "You have received Tk 500.00 refund from Daraz. Balance Tk 1,000.00. TrxID "
        "BLU1H6X87P at 30/12/2024 13:22",
        ("refund", "500.00", None),
        id="bkash-merchant-refund",
    ),
    pytest.param(
        "upay",
        "Tk. 500.00 has been received from 01540000301 as cashback. Balance Tk. 1000.00. "
        "TrxID 01K7C8Z24V at 12/10/2025 19:15",
        ("cashback", "500.00", "01540000301"),
        id="upay-as-cashback",
    ),
]


@pytest.mark.parametrize("sender, text, expected", AMOUNT_FIRST_NOT_A_PAYMENT)
def test_cashback_reward_loan_or_refund_worded_amount_first_is_not_incoming(sender, text, expected):
    parsed = parse_sms(sender, text)
    kind, amount, counterparty = expected
    assert (parsed.kind, parsed.incoming) == (kind, False)
    assert (parsed.amount, parsed.counterparty) == (Decimal(amount), counterparty)
    assert parsed.trx_id and parsed.balance  # still a credit the balance chain follows
    assert parsed.kind in CREDIT_KINDS


# Bank alerts that are no customer's transfer: a reversal, a refund or interest credited to the
# account (money in, chained as a credit), and the account's own transfer out worded as the
# beneficiary's credit (money out). Sender ids as phones show them.
BANK_NOT_A_CUSTOMER_CREDIT = [
    pytest.param(
        "16216",
        "Dear Sir, your A/C ***123 credited (Reversal) by Tk5,000.00 on 01-02-2025 02:55:44 PM "
        "C/B Tk50,450.00.",
        ("bank", "refund", "5000.00", "50450.00"),
        id="dbbl-reversal",
    ),
    pytest.param(
        "EBL",
        "Your A/C XXXX1234 is credited with BDT 5,000.00 as refund. Available Balance "
        "BDT 10,000.00",
        ("bank", "refund", "5000.00", "10000.00"),
        id="ebl-refund",
    ),
    pytest.param(
        "16216",
        "Dear Sir, your A/C ***123 credited (Interest) by Tk50.00 on 01-02-2025 C/B Tk50,450.00.",
        ("bank", "interest", "50.00", "50450.00"),
        id="dbbl-interest",
    ),
    pytest.param(
        "BRAC BANK",
        "Dear Customer, your fund transfer of BDT 5,000.00 from A/C#130320**2001 has been "
        "credited to beneficiary A/C 1234 on 23-03-22. Your A/C balance is TK 1,000.00.",
        ("bank", "bank_debit", "5000.00", "1000.00"),
        id="brac-credited-to-beneficiary",
    ),
    pytest.param(
        "16216",
        "Dear Sir, Tk5,000.00 transferred from your A/C ***123 and credited to A/C ***456 on "
        "01-02-2025 C/B Tk50,450.00.",
        ("bank", "bank_debit", "5000.00", "50450.00"),
        id="dbbl-transferred-from-your-account",
    ),
    pytest.param(
        "16216",
        "Tk5,000.00 has been credited to A/C:01711000101 from your A/C. Balance: Tk100.00 "
        "TxnId:6022415176 Date:27-DEC-25 08:43:52 pm.",
        ("rocket", "send", "5000.00", "100.00"),
        id="rocket-credited-to-another-account",
    ),
]


@pytest.mark.parametrize("sender, text, expected", BANK_NOT_A_CUSTOMER_CREDIT)
def test_a_bank_reversal_refund_interest_or_own_transfer_out_is_not_incoming(
    sender, text, expected
):
    parsed = parse_sms(sender, text)
    provider, kind, amount, balance = expected
    assert (parsed.provider, parsed.kind, parsed.incoming) == (provider, kind, False)
    assert (parsed.amount, parsed.balance) == (Decimal(amount), Decimal(balance))
    # Chained the way the money moved: credits before = balance - amount, debits + amount.
    assert parsed.kind in (DEBIT_KINDS if kind in ("bank_debit", "send") else CREDIT_KINDS)


# --- sender ids
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sender, provider",
    [
        ("bKash", "bkash"),
        ("BKASH", "bkash"),
        ("NAGAD", "nagad"),
        ("Nagad", "nagad"),
        ("16216", "rocket"),
        ("upay", "upay"),
        ("UPAY", "upay"),
        ("PUBALI BANK", "bank"),
        ("BRAC BANK", "bank"),
        ("01711000101", None),
        ("", None),
        (None, None),
    ],
)
def test_sender_ids_are_normalised_to_providers(sender, provider):
    assert sender_provider(sender) == provider


def test_lookalike_letters_in_the_sender_are_read_but_never_trusted():
    # Look-alike senders are refused since issue 16 (tests/sms/test_sms_senders.py has every form).
    parsed = parse_sms("bΚash", BKASH_RECEIVE)  # Greek capital kappa
    assert (parsed.provider, parsed.incoming, parsed.kind) == ("bkash", False, "unverified_sender")


def test_rocket_short_code_also_carries_bank_alerts():
    rocket_text = (
        "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 "
        "Date:27-DEC-25 08:43:52 pm."
    )
    bank_text = (
        "Dear Sir, your A/C ***123 credited (Transfer) by Tk500.00 on 01-02-2025 C/B Tk950.00."
    )
    assert parse_sms("16216", rocket_text).provider == "rocket"
    assert parse_sms("16216", bank_text).provider == "bank"


@pytest.mark.parametrize("sender, provider", [(provider, provider) for provider in PROVIDERS])
def test_sender_for_gives_the_id_phones_show(sender, provider):
    assert sender_provider(sender_for(provider)) == provider


def test_sender_for_an_unknown_provider_is_an_error():
    with pytest.raises(ValueError, match="unknown provider"):
        sender_for("paypal")


# --- variations the samples do not list
# ---------------------------------------------------------------------


def test_bangla_digits_are_read_as_ascii():
    text = (
        "You have received Tk ৫,০৭৫.০০ from ০১৭১১০০০১০১. Fee Tk ০.০০. Balance Tk ৬,০৭৫.৫০. "
        "TrxID BLU1H6X87P at ৩০/১২/২০২৪ ১৩:২২"
    )
    parsed = parse_sms("bKash", text)
    assert fields(parsed) == {
        "amount": Decimal("5075.00"),
        "trx_id": "BLU1H6X87P",
        "counterparty": "01711000101",
        "fee": Decimal("0.00"),
        "balance": Decimal("6075.50"),
        "time": "30/12/2024 13:22",
    }


def test_bangla_digits_in_a_nagad_text_are_read_as_ascii():
    text = (
        "Money Received.\nAmount: Tk ১১৯৫.০০\nSender: ০১৭৮১০০০২০১\nTxnID: ৭৫২C৪৯K৪\nBalance: "
        "Tk ১২০৯.৮০\n১৪/০৩/২০২৬ ১০:২৫"
    )  # noqa: E501
    parsed = parse_sms("NAGAD", text)
    assert (parsed.amount, parsed.trx_id, parsed.counterparty, parsed.printed_time) == (
        Decimal("1195.00"),
        "752C49K4",
        "01781000201",
        "14/03/2026 10:25",
    )


def test_extra_whitespace_and_line_breaks_do_not_matter():
    text = (
        "  You  have\nreceived   Tk  5,075.00\r\nfrom\t01711000101 .  Fee Tk 0.00 "
        ".\n\nBalance Tk 6,075.50 . TrxID   BLU1H6X87P   at  30/12/2024   13:22  "
    )
    parsed = parse_sms("bKash", text)
    assert (
        parsed.amount,
        parsed.counterparty,
        parsed.balance,
        parsed.trx_id,
        parsed.printed_time,
    ) == (Decimal("5075.00"), "01711000101", Decimal("6075.50"), "BLU1H6X87P", "30/12/2024 13:22")


def test_zero_width_and_fullwidth_characters_are_ignored():
    text = (
        "You have\u200b received Tk\u00a0５００.００ "
        "from ０１７１１０００１０１. Balance Tk 600.00. "
        "TrxID：ABC1234567 at 30/12/2024 13:22"
    )
    parsed = parse_sms("bKash", text)
    assert (parsed.amount, parsed.counterparty, parsed.trx_id) == (
        Decimal("500.00"),
        "01711000101",
        "ABC1234567",
    )


def test_nagad_fields_glued_together_are_separated():
    text = (
        "Money Received.Amount: Tk 1195.00Sender: 01781000201Ref: ranaTxnID: "
        "752C49K4Balance: Tk 1209.80"
        "14/03/2026 10:25"
    )
    parsed = parse_sms("NAGAD", text)
    assert fields(parsed) == {
        "amount": Decimal("1195.00"),
        "trx_id": "752C49K4",
        "counterparty": "01781000201",
        "fee": None,
        "balance": Decimal("1209.80"),
        "time": "14/03/2026 10:25",
    }
    assert parsed.incoming


def test_nagad_flattened_with_spaces_instead_of_lines():
    parsed = parse_sms("NAGAD", NAGAD_RECEIVE.replace("\n", " "))
    assert (parsed.kind, parsed.incoming, parsed.trx_id, parsed.balance) == (
        "receive",
        True,
        "752C49K4",
        Decimal("1209.80"),
    )


def test_rocket_fields_glued_together_are_separated():
    text = (
        "Tk1,500.00 received from A/C:***946Fee:Tk5.00,Your A/C Balance: Tk1,600.00TxnId:6022415176"
        "Date:27-DEC-25 08:43:52 pm"
    )
    parsed = parse_sms("16216", text)
    assert fields(parsed) == {
        "amount": Decimal("1500.00"),
        "trx_id": "6022415176",
        "counterparty": "***946",
        "fee": Decimal("5.00"),
        "balance": Decimal("1600.00"),
        "time": "27-DEC-25 08:43:52 pm",
    }


@pytest.mark.parametrize(
    "label",
    [
        "TrxID BLU1H6X87P",
        "TrxID: BLU1H6X87P",
        "TrxID:BLU1H6X87P",
        "TxnID: BLU1H6X87P",
        "TxnId:BLU1H6X87P",
        "Trx ID BLU1H6X87P",
        "TRXID blu1h6x87p",
        "Transaction ID: BLU1H6X87P",
    ],
)
def test_trx_id_label_variants_are_read(label):
    text = BKASH_RECEIVE.replace("TrxID BLU1H6X87P", label)
    assert parse_sms("bKash", text).trx_id == "BLU1H6X87P"


def test_missing_fee_clause_leaves_fee_empty():
    parsed = parse_sms("bKash", BKASH_RECEIVE.replace(" Fee Tk 0.00.", ""))
    assert (parsed.fee, parsed.amount, parsed.incoming) == (None, Decimal("5075.00"), True)


def test_upay_fee_clause_is_read_when_present():
    text = (
        "Tk. 900.00 has been received from 01540000301. Fee Tk. 2.50. Balance Tk. 900.00. "
        "TrxID 01K7C8Z24V at 12/10/2025 19:15"
    )
    assert parse_sms("upay", text).fee == Decimal("2.50")


@pytest.mark.parametrize(
    "wrapped",
    [
        "bKash: " + BKASH_RECEIVE,
        "From: bKash\n" + BKASH_RECEIVE + "\nSIM1\n2024-12-30 13:22:40",
        "WIN BIG! Click https://example.com\n"
        + BKASH_RECEIVE
        + "\nDownload App: https://bKa.sh/8app",
    ],
)
def test_forwarder_wrappers_and_promo_lines_do_not_confuse_the_parser(wrapped):
    parsed = parse_sms("bKash", wrapped)
    assert (parsed.kind, parsed.amount, parsed.trx_id, parsed.printed_time) == (
        "receive",
        Decimal("5075.00"),
        "BLU1H6X87P",
        "30/12/2024 13:22",
    )


def test_unknown_sender_wrapped_by_a_forwarder_names_the_provider():
    parsed = parse_sms("", "NAGAD\n" + NAGAD_RECEIVE)
    assert (parsed.provider, parsed.trx_id, parsed.incoming) == ("nagad", "752C49K4", False)


def test_unknown_sender_upay_text_is_guessed_as_upay_not_rocket():
    text = (
        "Tk. 900.00 has been received from 01540000301. Ref-. Balance Tk. 900.00. TrxID "
        "01K7C8Z24V at 12/10/2025 19:15"
    )  # noqa: E501
    parsed = parse_sms("", text)
    assert (parsed.provider, parsed.kind, parsed.incoming) == ("upay", "unverified_sender", False)


def test_nagad_amount_without_currency_mark_is_read():
    parsed = parse_sms("NAGAD", NAGAD_RECEIVE.replace("Amount: Tk 1195.00", "Amount: 1195.00"))
    assert (parsed.amount, parsed.incoming) == (Decimal("1195.00"), True)


def test_nagad_send_money_charge_is_read_as_its_fee():
    text = (
        "Send Money Successful.\nAmount: Tk 500.00\nReceiver: 01781000201\nTxnID: "
        "752C49K4\nCharge: Tk 5.00\nBalance: Tk 1209.80\n14/03/2026 10:25"
    )
    parsed = parse_sms("NAGAD", text)
    assert (parsed.kind, parsed.incoming, parsed.fee, parsed.counterparty) == (
        "send",
        False,
        Decimal("5.00"),
        "01781000201",
    )


def test_add_money_from_the_owners_card_is_not_incoming():
    parsed = parse_sms(
        "bKash",
        "Add Money Tk 500.00 from City Bank Card successful. Balance Tk 600.00. "
        "TrxID ABC1234567 at 30/12/2024 13:22",
    )
    assert (parsed.kind, parsed.incoming) == ("add_money", False)


def test_glued_sentences_and_twelve_hour_times_are_read():
    parsed = parse_sms(
        "bKash",
        "You have received Tk 500.00 from OnnorokomWeb.Balance Tk 600.00.TrxID ABC1234567 "
        "at 30/12/2024 01:22 PM",
    )
    assert (parsed.counterparty, parsed.balance, parsed.printed_time) == (
        "OnnorokomWeb",
        Decimal("600.00"),
        "30/12/2024 01:22 PM",
    )


def test_greek_lookalikes_in_a_trx_id_are_kept_as_printed_and_folded_for_matching():
    text = (
        "Payment Received. Amount: Tk 50.00 Customer: 01966000106 TxnID: 74HΝΕΚΟ8 Balance: "
        "Tk 247.78 20/10/2025 17:58"
    )
    parsed = parse_sms("NAGAD", text)
    assert parsed.trx_id == "74HΝΕΚΟ8"
    assert parsed.trx_key == "74HNEKO8"
    assert sms.canonical_trx_id("74hνεκο8 ") == "74HNEKO8"


def test_lower_case_trx_id_is_upper_cased():
    assert (
        parse_sms("bKash", BKASH_RECEIVE.replace("BLU1H6X87P", "blu1h6x87p")).trx_id == "BLU1H6X87P"
    )


def test_text_without_a_trx_id_cannot_pay():
    parsed = parse_sms("bKash", "You have received Tk 500.00 from 01711000101. Balance Tk 600.00.")
    assert (parsed.incoming, parsed.recognised, parsed.trx_id) == (False, False, None)


def test_unknown_text_from_an_unknown_sender_is_unrecognised():
    assert parse_sms("+8801711000101", "hello, are you coming at 5?") == ParsedSms()


@pytest.mark.parametrize(
    "printed, value",
    [
        ("Tk 1,000.00", "1000.00"),
        ("Tk.750.00", "750.00"),
        ("Tk. 900.00", "900.00"),
        ("Tk100.00", "100.00"),
        ("BDT 45,000.00", "45000.00"),
        ("TK 30", "30.00"),
        ("Tk.00", "0.00"),
        ("৳ ৫০০", "500.00"),
        ("Tk 1,00,000.50", "100000.50"),
        ("38,740", "38740.00"),
        ("Tk 16.1343", "16.13"),
    ],
)
def test_parse_amount_reads_every_printed_form(printed, value):
    amount = parse_amount(printed)
    assert amount == Decimal(value) and amount.as_tuple().exponent == -2


@pytest.mark.parametrize("printed", ["", "Tk", "abc", "1.2.3", "Tk -5", "9" * 40, None])
def test_parse_amount_refuses_what_is_not_a_sum(printed):
    assert parse_amount(printed) is None


# --- brand-defined templates
# --------------------------------------------------------------------------------

TEMPLATE = (
    r"Credit of (?:Tk|BDT)\.?\s*(?P<amount>[\d,.]+) from (?P<counterparty>\S+?)\. "
    r"Ref (?P<trx_id>\w+)\. Bal (?P<balance>[\d,.]+)\. Fee (?P<fee>[\d.]+)\. On "
    r"(?P<time>[\d/]+ [\d:]+)"
)


def test_template_extracts_named_groups():
    parsed = parse_with_template(
        TEMPLATE,
        "Credit of Tk 1,250.50 from 01711000101. Ref ab12cd34. Bal 2,000.00. "
        "Fee 0. On 01/02/2026 10:30",
    )
    assert parsed == ParsedSms(
        provider=None,
        incoming=True,
        kind="template",
        amount=Decimal("1250.50"),
        trx_id="AB12CD34",
        counterparty="01711000101",
        fee=Decimal("0.00"),
        balance=Decimal("2000.00"),
        printed_time="01/02/2026 10:30",
        recognised=True,
    )


def test_template_is_matched_case_insensitively_and_with_bangla_digits():
    parsed = parse_with_template(
        r"got (?P<amount>[\d.]+) tk id (?P<trx_id>\w+)", "GOT ১০০.০০ TK ID X1Y2Z3"
    )
    assert (parsed.amount, parsed.trx_id) == (Decimal("100.00"), "X1Y2Z3")


def test_template_that_does_not_match_gives_none():
    assert parse_with_template(TEMPLATE, "Your OTP is 1234") is None


def test_template_whose_amount_is_not_a_sum_gives_none():
    assert (
        parse_with_template(r"paid (?P<amount>\w+) ref (?P<trx_id>\w+)", "paid lots ref ABC123")
        is None
    )


@pytest.mark.parametrize("pattern", [r"(?P<amount>[\d.]+", r"(?P<amount>x)(?P<amount>y)", r"*bad"])
def test_invalid_template_regex_is_a_clear_value_error(pattern):
    with pytest.raises(ValueError, match="not a valid regular expression"):
        validate_template(pattern)
    with pytest.raises(ValueError):
        parse_with_template(pattern, "anything")


@pytest.mark.parametrize(
    "pattern, missing",
    [
        (r"Tk (?P<amount>[\d.]+)", "trx_id"),
        (r"TrxID (?P<trx_id>\w+)", "amount"),
        (r"Tk ([\d.]+) TrxID (\w+)", "amount, trx_id"),
    ],
)
def test_template_without_amount_and_trx_id_groups_is_refused(pattern, missing):
    with pytest.raises(ValueError, match=f"needs the named group\\(s\\) {missing}"):
        validate_template(pattern)


def test_template_with_an_unknown_group_name_is_refused():
    with pytest.raises(ValueError, match="unknown group"):
        validate_template(r"(?P<amount>\d+) (?P<trx_id>\w+) (?P<balence>\d+)")


@pytest.mark.parametrize("pattern", ["", "   ", None, 42, "x" * 5000])
def test_empty_or_oversized_template_is_refused(pattern):
    with pytest.raises(ValueError):
        validate_template(pattern)


def test_valid_template_compiles():
    assert validate_template(TEMPLATE).groupindex.keys() >= {"amount", "trx_id"}


# --- simulated SMS round trip
# -------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_built_sms_parses_back_to_its_fields(provider):
    when = datetime(2026, 3, 14, 22, 5, 9)
    text = build_sms_text(
        provider, Decimal("1234.5"), "AB12CD34EF", "01711000101", Decimal("99999.99"), when
    )
    parsed = parse_sms(sender_for(provider), text)
    assert (parsed.provider, parsed.incoming, parsed.recognised, parsed.kind) == (
        provider,
        True,
        True,
        "receive",
    )
    assert (parsed.amount, parsed.trx_id, parsed.counterparty, parsed.balance) == (
        Decimal("1234.50"),
        "AB12CD34EF",
        "01711000101",
        Decimal("99999.99"),
    )
    assert parsed.printed_time in {"14/03/2026 22:05", "14-MAR-26 10:05:09 pm"}


def test_built_sms_uses_each_providers_real_wording():
    when = datetime(2025, 12, 27, 8, 43, 52)
    args = (Decimal("100"), "6022415176", "***946", Decimal("100"), when)
    assert build_sms_text("rocket", *args).startswith(
        "Tk100.00 received from A/C:***946 Fee:Tk0, Your A/C Balance: Tk100.00 TxnId:6022415176 "
        "Date:27-DEC-25 08:43:52 am."
    )
    assert build_sms_text("bkash", *args).startswith(
        "You have received Tk 100.00 from ***946. Fee Tk 0.00."
    )
    assert build_sms_text("nagad", *args).startswith(
        "Money Received.\nAmount: Tk 100.00\nSender: ***946\n"
    )
    assert build_sms_text("upay", *args).startswith(
        "Tk. 100.00 has been received from ***946. Ref-."
    )


@FUZZ
@given(
    provider=st.sampled_from(PROVIDERS),
    amount=st.decimals(min_value=Decimal("0.01"), max_value=Decimal("99999999.99"), places=2),
    balance=st.decimals(min_value=Decimal("0"), max_value=Decimal("99999999.99"), places=2),
    trx_id=st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=8, max_size=12),
    phone=st.from_regex(r"01[3-9][0-9]{8}", fullmatch=True),
    when=st.datetimes(min_value=datetime(2001, 1, 1), max_value=datetime(2098, 12, 31)),
)
def test_any_built_sms_round_trips(provider, amount, balance, trx_id, phone, when):
    parsed = parse_sms(
        sender_for(provider), build_sms_text(provider, amount, trx_id, phone, balance, when)
    )
    assert (parsed.incoming, parsed.amount, parsed.trx_id, parsed.counterparty, parsed.balance) == (
        True,
        amount,
        trx_id,
        phone,
        balance,
    )


@pytest.mark.parametrize(
    "change, error",
    [
        ({"provider": "paypal"}, ValueError),
        ({"amount": 12.5}, TypeError),
        ({"amount": Decimal("-1")}, ValueError),
        ({"amount": Decimal("NaN")}, ValueError),
        ({"trx_id": "AB 12"}, ValueError),
        ({"counterparty": ""}, ValueError),
        ({"counterparty": "a\nb"}, ValueError),
        ({"when": "2026-01-01"}, TypeError),
    ],
)
def test_build_sms_text_refuses_bad_input(change, error):
    args = {
        "provider": "bkash",
        "amount": Decimal("1"),
        "trx_id": "AB12CD34",
        "counterparty": "01711000101",
        "balance": Decimal("2"),
        "when": datetime(2026, 1, 1),
    }
    with pytest.raises(error):
        build_sms_text(**{**args, **change})


# --- robustness
# ---------------------------------------------------------------------------------------------


@FUZZ
@given(
    sender=st.one_of(
        st.none(), st.text(max_size=40), st.sampled_from(["bKash", "NAGAD", "16216", "upay", ""])
    ),
    text=st.one_of(st.none(), st.text(max_size=600), st.binary(max_size=200), st.integers()),
)
def test_parse_sms_never_raises_on_arbitrary_input(sender, text):
    parsed = sms._parse(sender, text)  # without the safety net, so a real bug would surface here
    assert isinstance(parsed, ParsedSms)
    assert parsed.amount is None or parsed.amount.as_tuple().exponent == -2


@FUZZ
@given(
    sample=st.sampled_from(SAMPLES),
    cut=st.integers(min_value=0, max_value=400),
    noise=st.text(max_size=20),
)
def test_parse_sms_never_raises_on_mangled_real_texts(sample, cut, noise):
    text = sample["text"][:cut] + noise + sample["text"][cut:]
    assert isinstance(sms._parse(sample["sender"], text), ParsedSms)


HOSTILE = {
    "repeated-currency": "Tk " * 3000,
    "endless-name": "from " + "a" * 5000,
    "endless-trx": "TrxID " + "A" * 5000,
    "repeated-clauses": "received Tk 1 from " * 400,
    "endless-label": "Money Received. Sender: " + "x" * 5000,
    "many-lines": "\n".join(["Tk 1,"] * 2000),
    "lone-surrogate": "\ud800 lone surrogate Tk 1",
    "endless-separators": "1," * 3000,
    "unclosed-quote": "Payment to '" + "a " * 2000,
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_parsed_quickly_without_error(text):
    started = time.perf_counter()
    for sender in ("bKash", "NAGAD", "16216", "upay", "BRAC BANK", ""):
        assert isinstance(sms._parse(sender, text), ParsedSms)
    assert time.perf_counter() - started < 2.0


def test_safety_net_turns_an_internal_error_into_an_unrecognised_result(monkeypatch):
    def broken(sender, text):
        raise RuntimeError("boom")

    monkeypatch.setattr(sms, "_parse", broken)
    assert parse_sms("bKash", BKASH_RECEIVE) == ParsedSms()


def test_the_sample_copy_equals_the_shared_samples_file():
    if not SHARED_SAMPLES_PATH.is_file():
        pytest.skip(f"no shared samples file at {SHARED_SAMPLES_PATH} to compare the copy with")
    assert SAMPLES_PATH.read_bytes() == SHARED_SAMPLES_PATH.read_bytes(), (
        f"{SAMPLES_PATH} differs from {SHARED_SAMPLES_PATH}; copy the shared file over it"
    )


def test_every_incoming_payment_sample_sender_is_in_allowed_senders(brand):
    from gateway.sms.filter_rules import filter_rules

    allowed = set(filter_rules(brand)["allowed_senders"])
    # Incoming payments of the gateway's wallet providers ("other" samples are bank alerts and
    # noise).
    senders = {
        sample["sender"]
        for sample in SAMPLES
        if sample["incoming"] and sample["provider"] in PROVIDERS
    }

    assert senders and all(isinstance(sender, str) for sender in senders)
    assert senders - allowed == set()
    # Every spelling a provider's own sender id takes in the samples ("UPAY" as well as "upay"),
    # incoming or not; not a forged sender the parsers do not take for the provider.
    spellings = {
        sample["sender"]
        for sample in SAMPLES
        if sample["provider"] in PROVIDERS
        and sender_provider(sample["sender"] or "") == sample["provider"]
    }
    assert {"UPAY", "upay"} <= spellings
    assert spellings - allowed == set()
