"""Nagad: 'Label: value' texts from the 'NAGAD' sender, multi-line or flattened with fields
glued."""

import re
from dataclasses import replace

from .common import CURRENCY, HOUR, NUMBER, PARTY, REF, apply_rules, rule

PROVIDER = "nagad"
# How a forwarder may name the provider on its first line: a parser hint, never trust (see
# sms/senders.py).
NAME_KEYS = ("nagad",)
# No look-behind: a flattened text glues the date to the balance ('Tk 65981.1025/06/2023 17:25').
TIME = (re.compile(rf"(?P<time>[0-9]{{2}}/[0-9]{{2}}/[0-9]{{4}}\s*{HOUR})", re.I),)
# Nagad sometimes drops the currency mark (its balance line often does).
AMOUNT = rf"(?<![a-z])(?:amount|amt)\s*:?\s*(?:{CURRENCY}\.?\s*)?(?P<amount>{NUMBER})"
LABELLED = (
    r"(?<![a-z])(?:sender|customer|uddokta|agent|receiver|recipient|merchant|distributor|from|to)"
    rf"\s*:\s*{PARTY}"
)
QUOTED = r"payment\s+to\s+['\"‘’`]?(?P<cp>[^'\"‘’`\n]{1,100}?)['\"‘’`]?\s+is\s+successful"
# Nagad ends every header with a full stop; forged texts seen in the wild drop it ('Cash Out
# ReceivedAmount:').
HEADER = re.compile(
    r"(?:money|payment|cash[\s-]*in|cash[\s-]*out|b2b|remittance)\s+received(?P<stop>\s*\.)?", re.I
)


def nagad_rule(kind, incoming, trigger, party=LABELLED):
    """A Nagad rule: the amount follows 'Amount:'/'Amt:', the counterparty a role label."""
    return rule(kind, incoming, trigger, amount=AMOUNT, party=party)


RULES = (
    nagad_rule("refund", False, r"\brefund(?:ed)?\b|\breversed?\b|\bunsuccessful\b"),
    nagad_rule(
        "cashback",
        False,
        r"cash\s*back\s+(?:received|of|tk)|received\s+(?:a\s+)?cash\s*back",
        party=None,
    ),
    nagad_rule(
        "reward",
        False,
        r"(?:reward|bonus)\s+received|received\s+(?:a\s+)?(?:reward|bonus)",
        party=None,
    ),
    nagad_rule(
        "loan", False, r"\bloan\s+(?:received|disbursed)|received\s+(?:a\s+)?loan", party=None
    ),
    nagad_rule("receive", True, r"money\s+received"),
    nagad_rule("payment_received", True, r"payment\s+received"),
    nagad_rule("cash_in_received", True, r"cash[\s-]*in\s+received"),
    # On an agent's phone a customer's cash-out is e-money in; an agent's cash-in is e-money out.
    nagad_rule("cash_out_received", True, r"cash[\s-]*out\s+received"),
    nagad_rule("b2b_received", True, r"b2b\s+received"),
    nagad_rule("remittance_received", True, r"remittance\s+received"),
    nagad_rule("cash_in_sent", False, r"cash[\s-]*in\s+successful"),
    nagad_rule("cash_out", False, r"cash[\s-]*out\s+successful"),
    nagad_rule("send", False, r"send\s+money\s+successful|money\s+sent"),
    nagad_rule("payment", False, QUOTED),
    nagad_rule("payment", False, r"payment\s+successful"),
    nagad_rule("b2b_sent", False, r"b2b\s+(?:transfer\s+)?successful"),
    nagad_rule("recharge", False, r"recharge"),
    nagad_rule("bill_payment", False, r"bill\s+pay"),
)


def parse(t):
    """A ParsedSms for a Nagad transaction text, or None; a credit off Nagad's template comes back
    forged.
    """
    parsed = apply_rules(PROVIDER, RULES, t, TIME, free_text=REF)
    if parsed and parsed.incoming and not _header_has_full_stop(t):
        return replace(parsed, incoming=False, kind="forged")
    return parsed


def _header_has_full_stop(t):
    """Whether the 'X Received' header ends with the full stop Nagad always prints."""
    header = HEADER.search(t.folded)
    return header is None or header.group("stop") is not None


def build(amount, trx_id, counterparty, balance, when):
    """A 'Money Received.' text exactly as Nagad prints it (one field a line, no thousands
    separators).
    """
    return (
        f"Money Received.\nAmount: Tk {amount:.2f}\nSender: {counterparty}\nTxnID: {trx_id}\n"
        f"Balance: Tk {balance:.2f}\n{when:%d/%m/%Y %H:%M}"
    )
