"""bKash: sentence-style texts from the 'bKash' sender ending 'TrxID … at dd/mm/yyyy hh:mm'."""

import re

from .common import HOUR, PARTY, REF, SLASH_DATE, M, apply_rules, rule

PROVIDER = "bkash"
# How a forwarder may name the provider on its first line: a parser hint, never trust (see
# sms/senders.py).
NAME_KEYS = ("bkash",)
TIME = (re.compile(rf"(?<![a-z])at\s*(?P<time>{SLASH_DATE}\s*{HOUR})", re.I),)
FROM = rf"(?:\s+from\s+{PARTY})?"
TO = rf"(?:\s+to\s+{PARTY})?"

# Order matters only for ties: the rule whose trigger starts earliest wins (see common.pick_rule).
RULES = (
    rule(
        "refund",
        False,
        r"\bunsuccessful\b|has\s+been\s+(?:returned|refunded|reversed)",
        amount=M + r"\s+has\s+been\s+(?:returned|refunded|reversed)",
        party=r"(?<![a-z])to\s+" + PARTY,
    ),
    rule("cashback", False, rf"received\s+(?:a\s+)?cash\s*back|cash\s*back\s+(?:of\s+)?{M}"),
    rule(
        "reward",
        False,
        rf"received\s+(?:a\s+|your\s+)?(?:reward|bonus|prize)|(?:reward|bonus)\s+(?:of\s+)?{M}",
    ),
    rule(
        "loan",
        False,
        rf"received\s+(?:a\s+)?loan|\bloan\s+(?:of\s+)?{M}|loan\s+(?:has\s+been\s+)?disbursed",
    ),
    rule("interest", False, rf"(?:interest|profit)\s+(?:of\s+)?{M}"),
    rule("payment_received", True, rf"received\s+(?:a\s+)?payment\s+(?:of\s+)?{M}{FROM}"),
    rule("deposit_received", True, rf"received\s+(?:a\s+)?deposit\s+(?:of\s+)?{M}{FROM}"),
    # Money sent into the wallet from a bank app: 'received deposit from iBanking of Tk … from City
    # Bank'.
    rule(
        "deposit_received",
        True,
        rf"received\s+(?:a\s+)?deposit\s+from\s+[^\n.]{{1,40}}?\s+of\s+{M}{FROM}",
    ),
    rule("remittance_received", True, rf"received\s+(?:a\s+)?remittance\s+(?:of\s+)?{M}{FROM}"),
    rule("receive", True, rf"received\s+(?:money\s+)?(?:of\s+)?{M}{FROM}"),
    # On an agent's phone 'Cash Out … from <customer>' credits the agent and 'Cash In … to' debits
    # it.
    rule("cash_out_received", True, rf"cash[\s-]*out\s+(?:of\s+)?{M}\s+from\s+{PARTY}"),
    rule("cash_in_received", True, rf"cash[\s-]*in\s+(?:of\s+)?{M}\s+from\s+{PARTY}"),
    rule("cash_in_sent", False, rf"cash[\s-]*in\s+(?:of\s+)?{M}\s+to\s+{PARTY}"),
    rule("cash_out", False, rf"cash[\s-]*out\s+(?:of\s+)?{M}{TO}"),
    rule("send", False, rf"send\s+money\s+(?:of\s+)?{M}{TO}"),
    rule("payment", False, rf"payment\s+(?:of\s+)?{M}{TO}"),
    rule(
        "bill_payment",
        False,
        r"\bbill\b[^.\n]{0,40}\bpaid\b|\bbill\s+pay",
        amount=rf"amount\s*:?\s*{M}",
        party=r"biller\s*:\s*(?P<cp>[^\n]{1,100}?)(?=\s*(?:\n|$|(?-i:MMYYYY|A/C|Amount|Account)))",
    ),
    # Add Money moves the owner's own bank or card money in: not a customer's payment.
    rule("add_money", False, r"add(?:ed)?\s+money|successfully\s+added"),
    rule("recharge", False, rf"recharge\s+(?:of\s+)?{M}(?:\s+(?:to|for)\s+{PARTY})?"),
)


def parse(t):
    """A ParsedSms for a bKash transaction text, or None when it is not one."""
    return apply_rules(PROVIDER, RULES, t, TIME, free_text=REF)


def build(amount, trx_id, counterparty, balance, when):
    """A personal 'You have received' text exactly as bKash prints it."""
    return (
        f"You have received Tk {amount:,.2f} from {counterparty}. Fee Tk 0.00. Balance Tk "
        f"{balance:,.2f}. TrxID {trx_id} at {when:%d/%m/%Y %H:%M}"
    )
