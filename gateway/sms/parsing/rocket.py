"""Rocket (Dutch-Bangla Bank's wallet): compact texts from 16216 with 'TxnId:' and
'Date:dd-MON-yy'."""

import re

from .common import DATE, HOUR, PARTY, REF, M, apply_rules, rule

PROVIDER = "rocket"
# How a forwarder may name the provider on its first line: a parser hint, never trust (see
# sms/senders.py).
NAME_KEYS = ("16216",)
TIME = (re.compile(rf"(?<![a-z])date\s*:?\s*(?P<time>{DATE}(?:\s*{HOUR})?)", re.I),)
ACCOUNT = r"(?:(?:a/c|account)\s*(?:no\.?)?\s*[:#]?\s*)?"
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")

RULES = (
    rule("refund", False, r"\brefund(?:ed)?\b|\breversed?\b|\bunsuccessful\b"),
    rule("cashback", False, r"cash\s*back"),
    rule("receive", True, rf"{M}\s+(?:has\s+been\s+)?received\s+from\s+{ACCOUNT}{PARTY}"),
    # On an agent's phone 'Cash-Out from <customer>' credits the agent; 'Cash-Out to <agent>' debits
    # a customer.
    rule("cash_out_received", True, rf"cash[\s-]*out\s+from\s+{ACCOUNT}{PARTY}"),
    rule("cash_in_received", True, rf"cash[\s-]*in\s+from\s+{ACCOUNT}{PARTY}"),
    # A customer's cash-in at an agent, amount first: 'Cash In Tk1,000.00 from A/C:…'.
    rule("cash_in_received", True, rf"cash[\s-]*in\s+(?:of\s+)?{M}\s+from\s+{ACCOUNT}{PARTY}"),
    rule("cash_in_sent", False, rf"cash[\s-]*in\s+(?:of\s+)?{M}\s+to\s+{ACCOUNT}{PARTY}"),
    rule("cash_out", False, rf"cash[\s-]*out\s+to\s+{ACCOUNT}{PARTY}"),
    rule("cash_in_sent", False, rf"cash[\s-]*in\s+to\s+{ACCOUNT}{PARTY}"),
    rule("send", False, rf"{M}\s+(?:has\s+been\s+)?(?:sent|transferred)\s+to\s+{ACCOUNT}{PARTY}"),
    # A transfer out worded as the other side's credit: 'Tk… has been credited to A/C:… from your
    # A/C'. Only with 'from your A/C': a Dutch-Bangla credit alert must still reach the bank parser.
    rule(
        "send",
        False,
        rf"{M}\s+(?:has\s+been\s+)?credited\s+to\s+{ACCOUNT}{PARTY}\s+from\s+(?:your|ur)\s+a/c",
    ),
    rule(
        "payment",
        False,
        rf"{M}\s+paid\s+to\s+(?P<cp>[^\n]{{1,100}}?)"
        r"(?=\s+(?:bill|ref|txn|trx)|\s*[,;]|\.(?:\s|$)|\n|$)",
    ),
    rule("recharge", False, r"\brecharge"),
)


def parse(t):
    """A ParsedSms for a Rocket transaction text, or None (16216 also carries Dutch-Bangla Bank
    alerts).
    """
    return apply_rules(PROVIDER, RULES, t, TIME, free_text=REF)


def build(amount, trx_id, counterparty, balance, when):
    """A personal 'received from A/C' text exactly as Rocket prints it."""
    # Month and am/pm by hand: strftime's %b and %p follow the process locale.
    hour = when.hour % 12 or 12
    stamp = (
        f"{when:%d}-{_MONTHS[when.month - 1]}-{when:%y} {hour:02d}:{when:%M:%S} "
        f"{'am' if when.hour < 12 else 'pm'}"
    )
    return (
        f"Tk{amount:,.2f} received from A/C:{counterparty} Fee:Tk0, Your A/C Balance: "
        f"Tk{balance:,.2f} TxnId:{trx_id} Date:{stamp}. Download https://bit.ly/nexuspay"
    )
