"""An SMS meets its customer's claim, in either order; the periodic heal redoes what a crash left.

Whether the SMS pays the payment is sms_pays_payment's answer (pays.py); settling the pair is
settling.py's. One SMS pays at most one payment.
"""

import re
from decimal import Decimal

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import field_error, invalid_state
from ..extensions import db
from ..payments.amounts import fee_charged
from ..payments.lifecycle import transition
from ..payments.models.payment import Payment
from ..payments.models.payment_method import PROVIDERS
from ..states import SMS_MATCHED, SMS_REVIEW, SMS_UNMATCHED, not_held_for_review_sql
from .claims import (
    claimed_elsewhere,
    live_claims,
    open_claims,
    same_trx_id,
    stored_sms,
    stranded_credit_ids,
)
from .late_money import hold_late_sms
from .models.inbound_sms import InboundSms
from .parsing import canonical_trx_id
from .pays import sms_pays_payment
from .queries import claims_of_trx_ids, texts_by_id
from .settling import bind_held_sms, flag_lost_claim, settle, settle_together

TRX_ID_PATTERN = re.compile(r"^[A-Z0-9]{6,20}$")


def normalise_trx_id(value):
    """A TrxID as stored: trimmed, upper-case, look-alike letters folded, exactly as the parser
    stores it.
    """
    return canonical_trx_id((value or "").strip()) or ""


def submit_claim(payment, provider, provider_trx_id, sender_number=None, fee=None):
    """The customer's TrxID at checkout: created → processing, then settled with an SMS already
    here.

    `fee` is the chosen method's (payments/fees.py fee_for; None: no fee): it is recorded with
    the claim, in the same guarded UPDATE, so the SMS must bring amount_paid = amount + fee.

    Two commits: the claim alone first, so that an ingest committing meanwhile sees it; then the
    settling with a stored SMS, if one is here, in one unit of work.
    """
    provider = (provider or "").strip().lower()
    trx_id = normalise_trx_id(provider_trx_id)
    if provider not in PROVIDERS:
        raise field_error("provider", f"Provider must be one of {', '.join(PROVIDERS)}.")
    if not TRX_ID_PATTERN.match(trx_id):
        raise field_error(
            "provider_trx_id", "Enter the transaction ID exactly as the provider's SMS shows it."
        )
    now = utcnow()
    if payment.status == "created" and payment.expires_at <= now:
        raise invalid_state("This payment has expired.")
    if claimed_elsewhere(payment, provider, trx_id):
        raise field_error(
            "provider_trx_id",
            "This transaction ID has already been used for another payment.",
            code="already_used",
        )
    if not transition(
        payment,
        ("created",),
        "processing",
        provider=provider,
        provider_trx_id=trx_id,
        sender_number=sender_number or None,
        claimed_at=now,
        review_reason=None,
        **fee_charged(payment, Decimal("0.00") if fee is None else fee),
    ):
        db.session.rollback()
        db.session.refresh(payment)
        raise invalid_state(f"A {payment.status} payment cannot take a transaction ID.")
    # Committed before looking for the SMS: an ingest committing meanwhile then sees this claim.
    db.session.commit()
    with unit_of_work():
        sms = stored_sms(payment.brand_id, provider, trx_id, livemode=payment.livemode)
        if sms is not None and sms.status == SMS_UNMATCHED:
            settle(sms, payment)
        elif sms is not None and sms.status == SMS_REVIEW and sms.payment_id is None:
            bind_held_sms(sms, payment)  # a credit held unverified waits for the claim it pays
        elif sms is not None:
            # A rival took the SMS between the check above and this claim's commit.
            flag_lost_claim(payment, sms)
    db.session.refresh(payment)
    return payment


def match_sms_to_claim(sms):
    """Settle a stored incoming SMS with the processing payment that claimed its TrxID, or hold it
    on a claim left on a payment cancelled or expired before the money came; None when neither.
    """
    if sms.status != SMS_UNMATCHED or not sms.provider_trx_id:
        return None
    claims = open_claims(sms.brand_id, sms.provider, sms.provider_trx_id, livemode=sms.livemode)
    if not claims:
        return hold_late_sms(sms)
    # Of several claims of one TrxID, the earliest with the right amount wins.
    return settle(sms, next((p for p in claims if p.amount_paid == sms.amount), claims[0]))


# A claim still worth an SMS: live (processing), or left on a payment cancelled or expired before
# its money arrived.
CLAIM_HOLDING_STATUSES = ("processing", "cancelled", "expired")


def match_new_credits(credits):
    """At ingest: settle a batch's new credits with their claims; how many completed a payment.

    `credits` holds (SMS id, provider, TrxID) of the batch's stored credits: their claims are read
    in one query per provider, and only the texts someone claimed are loaded. The credits that
    pay the one live claim of their TrxID (sms_pays_payment; the common case) settle together in one
    commit (settling.settle_together, the batched path: docs/performance.md). Any other claimed
    credit, or all of them when a guard finds a row moved meanwhile, goes through
    match_sms_to_claim in a unit of work of its own.
    """
    claims = {}
    for provider in sorted({provider for _, provider, _ in credits}):
        found = claims_of_trx_ids(provider, [trx for _, p, trx in credits if p == provider])
        claims.update({(provider, trx_id): payments for trx_id, payments in found.items()})
    claimed = [sms_id for sms_id, provider, trx_id in credits if (provider, trx_id) in claims]
    now = utcnow()
    together, alone = [], []
    for sms in texts_by_id(claimed).values():
        if sms.status != SMS_UNMATCHED or not sms.provider_trx_id:
            continue  # held for review by its chain step meanwhile
        payments = claims.get((sms.provider, sms.provider_trx_id), [])
        live = live_claims(payments, sms.brand_id, now, livemode=sms.livemode)
        if len(live) == 1 and sms_pays_payment(sms, live[0]).pays:
            together.append((sms, live[0]))
        elif any(
            p.status in CLAIM_HOLDING_STATUSES and p.livemode == sms.livemode for p in payments
        ):
            alone.append(sms)
    completed = 0
    if together:
        with unit_of_work():
            completed = settle_together(together)
    if completed is None:
        completed, alone = 0, [sms for sms, _ in together] + alone
    for sms in alone:
        db.session.refresh(sms)
        with unit_of_work():
            completed += match_sms_to_claim(sms) == SMS_MATCHED
    return completed


def match_stranded_credits(brand_id=None, slots=None):
    """Match stored incoming credits left unmatched although a live claim waits for them; how many
    settled.

    The periodic job runs it over every brand; a phone's duplicate forward runs it for the TrxIDs it
    sent (`slots`: (provider, TrxID) pairs). Each text goes through match_sms_to_claim, in a unit of
    work of its own.
    """
    settled = 0
    for sms_id in stranded_credit_ids(utcnow(), brand_id, slots):
        sms = db.session.execute(
            db.select(InboundSms)
            .where(InboundSms.id == sms_id)
            .execution_options(populate_existing=True)
        ).scalar_one_or_none()
        if sms is None:
            continue
        with unit_of_work():
            settled += match_sms_to_claim(sms) is not None
    return settled


def flag_lost_claims():
    """Live claims whose TrxID's SMS already paid another payment, still without a reason: flagged
    together in one unit of work; how many.
    """
    now = utcnow()
    with unit_of_work():
        lost = (
            db.session.execute(
                db.select(Payment)
                .join(
                    InboundSms,
                    same_trx_id(),
                )
                .where(
                    Payment.status == "processing",
                    Payment.expires_at > now,
                    not_held_for_review_sql(),
                    InboundSms.payment_id.is_not(None),
                    InboundSms.payment_id != Payment.id,
                )
                .limit(500)
            )
            .scalars()
            .all()
        )
        return sum(flag_lost_claim(payment) == SMS_REVIEW for payment in lost)


def heal_matching():
    """The periodic self-heal: match stranded credits, flag claims that lost their TrxID; how many
    payments moved.
    """
    return match_stranded_credits() + flag_lost_claims()
