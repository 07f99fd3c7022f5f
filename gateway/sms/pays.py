"""Whether an SMS pays a payment, and if not, why: the one matching rule every path asks."""

import re
from dataclasses import dataclass
from datetime import timedelta

from ..money import format_amount
from ..payments.models.payment_method import PROVIDERS
from ..states import SMS_REVIEW
from .printed_time import local_now, printed_day_and_time

SMS_CURRENCY = "BDT"

# The reasons an SMS does not pay a payment, as machine words (a Problem's code).
WRONG_MODE = "wrong_mode"  # a simulated (test) text and a live payment, or the reverse
ALREADY_USED = "already_used"  # the text is bound to another payment
CANCELLED = "cancelled"  # the payment was cancelled before the money came (late money)
EXPIRED = "expired"  # the payment expired before the money came (late money)
HELD = "held"  # the text is held for review on its own: sender id, balance chain
WRONG_CURRENCY = "wrong_currency"
AMOUNT_UNKNOWN = "amount_unknown"  # an unparsed text: nothing to compare
AMOUNT_MISMATCH = "amount_mismatch"
WRONG_PROVIDER = "wrong_provider"
WRONG_SENDER = "wrong_sender"  # not the number the customer entered at checkout
PRINTED_BEFORE = "printed_before"  # the money moved well before the payment existed

# How long before its payment was created a text may print its money and still pay it: a customer
# may send first and check out after, but not reuse a receipt from another day (an old text the
# phone forwards late, when it is first paired, say).
EARLIEST = timedelta(days=1)

LATE = {
    CANCELLED: "Paid after the payment was cancelled",
    EXPIRED: "Paid after the payment expired",
}


@dataclass(frozen=True)
class Problem:
    """One reason an SMS does not pay a payment: a machine word and the sentence the panel shows."""

    code: str
    message: str


@dataclass(frozen=True)
class Verdict:
    """The rule's answer: the SMS pays when no problem stands; else each problem, gravest first."""

    problems: tuple[Problem, ...] = ()

    @property
    def pays(self):
        """Whether the SMS pays the payment outright."""
        return not self.problems

    @property
    def reason(self):
        """The weightiest problem's code, or None when the SMS pays."""
        return self.problems[0].code if self.problems else None

    @property
    def messages(self):
        """Every problem's sentence, in order."""
        return [problem.message for problem in self.problems]

    def has(self, *codes):
        """Whether one of these problems stands."""
        return any(problem.code in codes for problem in self.problems)

    def why(self, first=None):
        """The review reason stored on the text and the payment: `first`, then each problem."""
        return "; ".join(([first] if first else []) + self.messages)[:255] or None


def sms_pays_payment(sms, payment):
    """Does this stored SMS pay this payment, and if not, why (docs/sms-trust.md).

    Reads the two rows only, never the database: every path (at ingest, at checkout, a batch, a
    held credit released, late money, the merchant's hand match) asks it, then guards its own write.
    """
    # The taka total the customer sends (payments/amounts.py): None for a currency with no rate.
    amount, due = sms.amount, payment.amount_paid
    in_bdt = due is not None
    claimed, sent = last_digits(payment.sender_number), last_digits(sms.counterparty)
    checks = (
        (
            WRONG_MODE,
            not same_mode(sms, payment),
            "A test SMS pays only a test payment, and a live SMS only a live one",
        ),
        (ALREADY_USED, sms.payment_id not in (None, payment.id), "SMS bound to another payment"),
        (payment.status, payment.status in LATE, LATE.get(payment.status)),
        (
            HELD,
            sms.status == SMS_REVIEW and sms.payment_id is None,
            sms.review_reason or "held for review",
        ),
        (
            PRINTED_BEFORE,
            printed_before(sms, payment),
            f"SMS printed {sms.printed_time}, over a day before the payment was created",
        ),
        (
            AMOUNT_UNKNOWN,
            amount is None,
            f"SMS amount unknown differs from {format_amount(due or payment.amount)}",
        ),
        (
            WRONG_CURRENCY,
            amount is not None and not in_bdt,
            f"SMS amounts are in {SMS_CURRENCY}; the payment is in {payment.currency} with no rate",
        ),
        (
            AMOUNT_MISMATCH,
            amount is not None and in_bdt and amount != due,
            f"SMS amount {format_amount(amount)} differs from {format_amount(due)}",
        ),
        (
            WRONG_PROVIDER,
            sms.provider in PROVIDERS
            and bool(payment.provider)
            and payment.provider != sms.provider,
            f"SMS is from {sms.provider}; the customer claimed {payment.provider}",
        ),
        (
            WRONG_SENDER,
            claimed and sent and claimed != sent,
            f"SMS sender {sms.counterparty} differs from the number entered, "
            f"{payment.sender_number}",
        ),
    )
    return Verdict(tuple(Problem(code, message) for code, stands, message in checks if stands))


def printed_before(sms, payment):
    """Whether the text prints its money more than EARLIEST before the payment was created, on the
    brand's wall clock (a date alone counts as the end of that day); False when it prints no date.
    """
    read = printed_day_and_time(sms.printed_time)
    if read is None or payment.created_at is None:
        return False
    day, moment = read
    created = local_now(payment.created_at, payment.brand.timezone)
    return (moment or day + timedelta(days=1)) < created - EARLIEST


def same_mode(sms, payment):
    """Whether the text and the payment are both live or both test: the one rule that keeps a
    simulated SMS off live payments (and a real one off test payments); the candidate queries
    (claims.py) ask the same of the database.
    """
    # An unsaved row has no default yet (None): live, as the column's default says.
    return (sms.livemode is not False) == (payment.livemode is not False)


def last_digits(number):
    """The last ten digits of a phone number, to compare 01712… with +8801712…; None when masked."""
    digits = re.sub(r"\D", "", number or "")
    return digits[-10:] if len(digits) >= 10 else None
