"""Upay: sentence-style texts from the 'upay' sender, 'Tk. 900.00 has been received from …'."""

import re

from .common import HOUR, PARTY, REF, SLASH_DATE, M, apply_rules, rule

PROVIDER = "upay"
# How a forwarder may name the provider on its first line: a parser hint, never trust (see
# sms/senders.py).
NAME_KEYS = ("upay",)
TIME = (re.compile(rf"(?<![a-z])at\s*(?P<time>{SLASH_DATE}\s*{HOUR})", re.I),)
FROM = rf"(?:\s+from\s+{PARTY})?"

RULES = (
    rule("refund", False, r"\bunsuccessful\b|has\s+been\s+(?:returned|refunded|reversed)"),
    rule("cashback", False, rf"received\s+(?:a\s+)?cash\s*back|cash\s*back\s+(?:of\s+)?{M}"),
    rule("reward", False, r"received\s+(?:a\s+|your\s+)?(?:reward|bonus|prize)"),
    rule("loan", False, r"received\s+(?:a\s+)?loan|\bloan\s+disbursed"),
    # On an agent's phone a customer's cash-out is e-money in.
    rule("cash_out_received", True, rf"received\s+cash[\s-]*out\s+(?:of\s+)?{M}{FROM}"),
    rule("cash_in_received", True, rf"received\s+cash[\s-]*in\s+(?:of\s+)?{M}{FROM}"),
    # 'Cash In of Tk. 1000.00 from <agent> is successful' credits a customer; '… to <customer>'
    # debits an agent.
    rule("cash_in_received", True, rf"cash[\s-]*in\s+(?:of\s+)?{M}\s+from\s+{PARTY}"),
    rule("cash_in_sent", False, rf"cash[\s-]*in\s+(?:of\s+)?{M}\s+to\s+{PARTY}"),
    rule("payment_received", True, rf"received\s+(?:a\s+)?payment\s+(?:of\s+)?{M}{FROM}"),
    rule("receive", True, rf"{M}\s+has\s+been\s+received{FROM}"),
    rule("receive", True, rf"received\s+(?:money\s+)?(?:of\s+)?{M}{FROM}"),
    rule("send", False, rf"{M}\s+has\s+been\s+sent(?:\s+to\s+{PARTY})?"),
    rule("send", False, rf"send\s+money\s+(?:of\s+)?{M}(?:\s+to\s+{PARTY})?"),
    rule("cash_out", False, rf"cash[\s-]*out\s+(?:of\s+)?{M}(?:\s+(?:to|at)\s+{PARTY})?"),
    rule("payment", False, rf"payment\s+(?:of\s+)?{M}(?:\s+to\s+{PARTY})?"),
    rule("recharge", False, rf"recharge\s+(?:of\s+)?{M}(?:\s+(?:to|for)\s+{PARTY})?"),
)


def parse(t):
    """A ParsedSms for an Upay transaction text, or None when it is not one."""
    return apply_rules(PROVIDER, RULES, t, TIME, free_text=REF)


def build(amount, trx_id, counterparty, balance, when):
    """A personal 'has been received' text exactly as Upay prints it."""
    return (
        f"Tk. {amount:.2f} has been received from {counterparty}. Ref-. Balance Tk. {balance:.2f}. "
        f"TrxID {trx_id} at {when:%d/%m/%Y %H:%M}"
    )
