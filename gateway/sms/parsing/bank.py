"""Bank account alerts (Dutch-Bangla via 16216, BRAC, Pubali, Rupali, …): credits, debits, balance
replies.
"""

import re
from dataclasses import replace

from .common import (
    CURRENCY,
    DATE,
    HOUR,
    NOT_A_PAYMENT,
    NUMBER,
    PARTY,
    M,
    ParsedSms,
    apply_rules,
    rule,
    tidy_party,
    to_decimal,
)

PROVIDER = "bank"
TIME = (re.compile(rf"(?<![a-z])on\s+(?P<time>{DATE}(?:\s+{HOUR})?)", re.I),)
# Wording that places a text in a bank account, for texts from senders we do not know.
CONTEXT = re.compile(r"(?<![a-z])(?:a/c|account|bank|card)(?![a-z])", re.I)
FROM = re.compile(rf"(?<![a-z])from\s+{PARTY}", re.I)
# Dutch-Bangla names the channel in brackets: 'credited (ATM A/C to A/C Transfer Credit) by Tk…'.
CHANNEL = re.compile(r"credited\s*\((?P<cp>[^)\n]{1,100})\)", re.I)
BALANCE_REPLY = re.compile(
    rf"balance\s+of\s+(?:your\s+)?(?:a/c|account)[^\n]{{0,40}}?\s+is\s+(?:{CURRENCY}\.?\s*"
    rf")?(?P<balance>{NUMBER})",
    re.I,
)
AS_ON = re.compile(rf"as\s+(?:on|of)\s+(?P<time>{DATE}(?:\s+{HOUR})?)", re.I)

# The account's own transfer out, confirmed in a credit's words ('… from your A/C … and credited to
# A/C ***456', '… has been credited to beneficiary A/C …'): money out, wherever it is said.
OUTGOING = rule(
    "bank_debit",
    False,
    r"from\s+(?:your|ur)\s+(?:a/c|account)(?![a-z])|credited\s+to\s+(?:the\s+)?beneficiary"
    r"|(?:your|ur)\s+fund\s+transfer",
)
NOT_INCOMING = (OUTGOING, *NOT_A_PAYMENT)

RULES = (
    rule("bank_credit", True, r"\bcredited\b|\bdeposited\b|received\s+from|\bcr\.?\s+(?:tk|bdt)"),
    rule(
        "bank_debit",
        False,
        rf"\bdebited\b|\bwithdrawn\b|\bdr\.?\s+(?:tk|bdt)|\bpaid\s+(?:{M}\s+)?to\b",
    ),
)


def parse(t):
    """A ParsedSms for a bank alert, or None when it is not one; bank alerts need no TrxID."""
    reply = BALANCE_REPLY.search(t.folded)
    if reply:
        time = AS_ON.search(t.folded)
        return ParsedSms(
            provider=PROVIDER,
            kind="balance",
            balance=to_decimal(t.grab(reply, "balance")),
            printed_time=t.grab(time, "time"),
            recognised=True,
        )
    # No free text is blanked: no bank is known to print the payer's own words, and a reason word
    # in them could only leave a real credit unpaid (stored, matchable by hand), never pay one.
    parsed = apply_rules(PROVIDER, RULES, t, TIME, needs_trx=False, overrides=NOT_INCOMING)
    if parsed and parsed.counterparty is None:
        # The 'from' clause names the payer; without one, the bracketed channel is all there is.
        party = t.grab(FROM.search(t.folded), "cp") or t.grab(CHANNEL.search(t.folded), "cp")
        parsed = replace(parsed, counterparty=tidy_party(party))
    return parsed
