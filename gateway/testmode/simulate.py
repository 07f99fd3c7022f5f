"""A test payment paid, held for review or expired without a phone or money, through the same
claim, SMS ingestion, matching, expiry and webhooks as a live payment
(docs/testing-your-integration.md).
"""

import secrets
from decimal import Decimal

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import NotPermitted, field_error, invalid_state
from ..extensions import db
from ..payments.fees import fee_for
from ..payments.lifecycle import expire_payment
from ..payments.methods import list_enabled_methods
from ..sms.matching import submit_claim
from ..sms.simulator import forward_test_text, simulated_text
from ..states import PAYMENT_CREATED, PAYMENT_PROCESSING, payment_in_review

PAID, MISMATCH, EXPIRED = "paid", "mismatch", "expired"
OUTCOMES = (PAID, MISMATCH, EXPIRED)
# The simulated customer's wallet: the number the claim names and the text shows, so they agree.
CUSTOMER_NUMBER = "01712345678"
# No look-alike letters: the TrxID reads back from the text exactly as the claim wrote it.
TRX_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
DEFAULT_PROVIDER = "bkash"
LIVE_REFUSED = "Only a test payment can be simulated; a live payment is paid with real money."


def simulate_payment(payment, outcome):
    """Give a test payment the outcome asked for, as production would reach it; the payment after.

    `paid`: the customer's claim, then the provider's text with the amount due, through
    sms/ingest.py: completed, payment.completed sent. `mismatch`: the same with an amount one taka
    short (one over for a payment of 1.00 or less): held for review. `expired`: the expiry
    transition, payment.expired sent. Refused for a live payment (NotPermitted), a bad outcome
    (on `outcome`) and a state that does not allow it (INVALID_STATE).
    """
    if payment.livemode:
        raise NotPermitted(LIVE_REFUSED)
    if outcome not in OUTCOMES:
        raise field_error("outcome", f"Outcome must be one of {', '.join(OUTCOMES)}.")
    if outcome == EXPIRED:
        return expire_now(payment)
    provider, trx_id = claim_for(payment)
    due = payment.amount_paid or payment.amount  # a currency with no rate: a text that cannot pay
    amount = due if outcome == PAID else mismatched(due)
    text = simulated_text(payment.brand, provider, amount, trx_id, CUSTOMER_NUMBER, livemode=False)
    forward_test_text(payment.brand, provider, text)
    db.session.refresh(payment)
    return payment


def claim_for(payment):
    """(provider, TrxID) of the payment's claim: the one it holds, else a new one made as the
    customer would make it at checkout (created → processing, committed by submit_claim)."""
    now = utcnow()
    if payment.status == PAYMENT_CREATED and payment.expires_at > now:
        method = simulated_method(payment.brand)
        provider = method.provider if method is not None else DEFAULT_PROVIDER
        submit_claim(
            payment,
            provider,
            new_test_trx_id(),
            sender_number=CUSTOMER_NUMBER,
            fee=fee_for(method, payment.amount_bdt),  # as the checkout charges that method's fee
        )
        if payment.status == PAYMENT_PROCESSING and not payment_in_review(payment):
            return payment.provider, payment.provider_trx_id
    elif (
        payment.status == PAYMENT_PROCESSING
        and payment.expires_at > now
        and not payment_in_review(payment)
        and payment.provider_trx_id
    ):
        return payment.provider, payment.provider_trx_id  # a claim whose text never came
    raise invalid_state(f"A {payment.status} payment cannot take a simulated SMS.")


def expire_now(payment):
    """The expiry transition, now: an open test payment not held for review → expired."""
    now = utcnow()
    if not expire_payment(payment, expires_at=min(payment.expires_at, now)):
        db.session.rollback()
        db.session.refresh(payment)
        raise invalid_state(f"A {payment.status} payment cannot expire.")
    commit_work()
    db.session.refresh(payment)
    return payment


def simulated_method(brand):
    """The brand's first way to pay at checkout, else None (bKash, no fee)."""
    methods = list_enabled_methods(brand)
    return methods[0] if methods else None


def new_test_trx_id():
    """A random ten-character TrxID, as wallets print them."""
    return "".join(secrets.choice(TRX_ALPHABET) for _ in range(10))


def mismatched(amount):
    """An amount that is not the one due: one taka short, or one over when that would leave
    nothing."""
    one = Decimal("1.00")
    return amount - one if amount > one else amount + one
