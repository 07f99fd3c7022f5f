"""Bank methods: a listed bank's credit alert pays the one live bank claim of its amount
(docs/methods.md).

A bank alert carries no TrxID (parsing/bank.py: provider "bank", needs_trx=False), so the claim
cannot be found by TrxID as a wallet's is. The customer's claim records what they typed (their
transfer reference, shown to the merchant) with provider "bank"; an alert and a claim are paired
when the alert's amount equals the claim's amount_paid and no other live bank claim of the brand
(same mode) waits for that amount. Whether the pair pays is then sms_pays_payment's answer, as for
a wallet, and settle() binds and completes it. Two claims of one amount at once are ambiguous: the
alert stays unmatched and the merchant matches it by hand (hand_matching.py).
"""

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import field_error
from ..extensions import db
from ..payments.manual import claim_with_reference
from ..payments.models.payment import Payment
from ..payments.models.payment_method import BANK
from ..states import PAYMENT_PROCESSING, SMS_UNMATCHED, not_held_for_review_sql
from .models.inbound_sms import InboundSms
from .settling import settle

MAX_REFERENCE = 64


def live_bank_claims(brand_id, amount, livemode, now):
    """The brand's live bank claims waiting for exactly this taka amount, earliest first."""
    return (
        db.session.execute(
            db.select(Payment)
            .where(
                Payment.brand_id == brand_id,
                Payment.provider == BANK,
                Payment.status == PAYMENT_PROCESSING,
                not_held_for_review_sql(),
                Payment.expires_at > now,
                Payment.amount_paid == amount,
                Payment.livemode.is_(livemode),
            )
            .order_by(Payment.claimed_at, Payment.id)
            .limit(2)
            .execution_options(populate_existing=True)
        )
        .scalars()
        .all()
    )


def unmatched_bank_credits(payment):
    """Stored bank credits of the payment's amount, unmatched, received since it was created."""
    return (
        db.session.execute(
            db.select(InboundSms)
            .where(
                InboundSms.brand_id == payment.brand_id,
                InboundSms.provider == BANK,
                InboundSms.incoming.is_(True),
                InboundSms.status == SMS_UNMATCHED,
                InboundSms.payment_id.is_(None),
                InboundSms.amount == payment.amount_paid,
                InboundSms.livemode.is_(bool(payment.livemode)),
                InboundSms.created_at >= payment.created_at,
            )
            .order_by(InboundSms.id)
            .limit(2)
            .execution_options(populate_existing=True)
        )
        .scalars()
        .all()
    )


def match_bank_credit(sms):
    """Settle a stored bank credit with the one live bank claim of its amount; the settle() result,
    or None when there is no claim, or more than one."""
    if (
        sms.provider != BANK
        or not sms.incoming
        or sms.status != SMS_UNMATCHED
        or sms.amount is None
    ):
        return None
    claims = live_bank_claims(sms.brand_id, sms.amount, bool(sms.livemode), utcnow())
    if len(claims) != 1:
        return None
    return settle(sms, claims[0])


def match_bank_credits(sms_ids):
    """At ingest: each new bank credit tried against the live bank claims, one unit of work each."""
    settled = 0
    for sms_id in sms_ids:
        sms = db.session.get(InboundSms, sms_id, populate_existing=True)
        if sms is None:
            continue
        with unit_of_work():
            settled += match_bank_credit(sms) is not None
    return settled


def submit_bank_claim(payment, method, reference):
    """The customer says they transferred to the bank method: created → processing (provider "bank",
    their reference kept for the merchant), then paired with an alert already stored, if exactly one
    of that amount waits.
    """
    if method.kind != BANK:
        raise field_error("method_id", "That method is not a bank method.")
    reference = " ".join(str(reference or "").split())
    if not 3 <= len(reference) <= MAX_REFERENCE:
        raise field_error(
            "reference", f"Enter your transfer's reference (3 to {MAX_REFERENCE} characters)."
        )
    claim_with_reference(payment, method, reference)
    # Committed before looking for the alert: an ingest committing meanwhile then sees this claim.
    db.session.commit()
    db.session.refresh(payment)  # the UPDATE wrote the fee and amount_paid the alert must bring
    with unit_of_work():
        credits = unmatched_bank_credits(payment)
        rivals = live_bank_claims(
            payment.brand_id, payment.amount_paid, bool(payment.livemode), utcnow()
        )
        if len(credits) == 1 and len(rivals) == 1:
            settle(credits[0], payment)
    db.session.refresh(payment)
    return payment
