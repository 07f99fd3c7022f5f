"""Settling a matched pair: bind the SMS to its payment and complete it, or hold both for review."""

from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..devices.notifications import notify_devices
from ..domain_errors import DomainError, invalid_state
from ..extensions import db
from ..notifications.events import notify_payments_in_review
from ..payments.amounts import fee_received
from ..payments.lifecycle import complete_payment, complete_payments
from ..payments.models.payment import OPEN_STATUSES, PAID_STATUSES, Payment
from ..payments.models.payment_method import PROVIDERS
from ..states import (
    INBOUND_SMS,
    SMS_MATCHED,
    SMS_REVIEW,
    SMS_UNMATCHED,
    not_held_for_review_sql,
    write_status,
)
from .claims import open_claims, stored_sms
from .models.inbound_sms import InboundSms
from .pays import WRONG_MODE, sms_pays_payment


def settle(sms, payment):
    """Bind one unmatched SMS to one payment and complete it, or hold both for review
    (sms_pays_payment); "matched", "review", or None when a rival won. Commits (commit_work).
    """
    verdict = sms_pays_payment(sms, payment)
    judged = {payment.id: payment.claimed_at}  # the claim the verdict is about
    if verdict.has(WRONG_MODE):
        return None  # a test text and a live payment (or the reverse) are never bound, even held
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            (SMS_UNMATCHED,),
            SMS_MATCHED if verdict.pays else SMS_REVIEW,
            payment_id=payment.id,
            review_reason=verdict.why(),
            matched_at=utcnow(),
        )
    except IntegrityError:  # the payment already consumed another SMS
        won = 0
    if won != 1:
        db.session.rollback()
        flag_lost_claim(payment)
        return None
    if not verdict.pays:
        return hold_for_review(payment, verdict.why())
    try:
        complete_with_sms(payment, sms, claims=judged)
    except DomainError:  # cancelled, expired or claimed anew meanwhile; the SMS rolled back too
        return None
    return SMS_MATCHED


def settle_together(pairs):
    """Bind each SMS to the payment it pays and complete them all in one commit (a phone's batch);
    None, all rolled back, when any text or payment moved meanwhile.
    """
    if not pairs:
        return 0
    judged = {payment.id: payment.claimed_at for _, payment in pairs}
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id.in_([sms.id for sms, _ in pairs]), InboundSms.payment_id.is_(None)),
            (SMS_UNMATCHED,),
            SMS_MATCHED,
            payment_id=db.case({sms.id: payment.id for sms, payment in pairs}, value=InboundSms.id),
            review_reason=None,
            matched_at=utcnow(),
        )
    except IntegrityError:  # a payment already consumed another SMS
        won = None
    if won != len(pairs):
        db.session.rollback()
        return None
    try:
        complete_payments(
            [
                (
                    payment,
                    sms.provider,
                    sms.provider_trx_id,
                    payment.sender_number or sms.counterparty,
                )
                for sms, payment in pairs
            ],
            claims=judged,
        )
    except DomainError:  # one moved meanwhile (complete_payments); everything was rolled back
        return None
    return len(pairs)


def complete_with_sms(payment, sms, from_states=OPEN_STATUSES, claims=None):
    """Complete a payment with the SMS that paid it (provider, TrxID, sender), and tell rivals
    claiming that TrxID why they will not complete; commits (commit_work). `claims`: the claim
    the SMS was judged against (complete_payments).
    """
    transaction = complete_payment(
        payment,
        provider=sms.provider if sms.provider in PROVIDERS else None,
        provider_trx_id=sms.provider_trx_id,
        sender_number=payment.sender_number or (sms.counterparty or "")[:20] or None,
        from_states=from_states,
        # A short text the merchant accepted (review, hand match): the fee that did not come is
        # not recorded as paid.
        charged=fee_received(payment, sms.amount),
        claims=claims,
    )
    flag_rival_claims(payment)
    return transaction


def give_review_reason(payment_ids, reason, statuses=("processing",), *guards):
    """Write a review reason on payments still in `statuses` (and `guards`); how many took it."""
    taken = db.session.execute(
        db.update(Payment)
        .where(Payment.id.in_(payment_ids), Payment.status.in_(statuses), *guards)
        .values(review_reason=reason[:255], updated_at=utcnow())
        .execution_options(synchronize_session=False)
    ).rowcount
    if taken:
        notify_payments_in_review(payment_ids, reason)
    return taken


def notify_review(payment, reason):
    """Tell the brand's phones that a live payment waits for the merchant (a test one tells
    nobody)."""
    if not payment.livemode:
        return
    notify_devices(
        payment.brand_id,
        "payment.review",
        f"Payment {payment.reference or payment.public_id} needs review",
        body=reason,
    )


def hold_for_review(payment, reason):
    """Keep the payment processing with a review reason; the SMS stays bound to it."""
    if give_review_reason([payment.id], reason) != 1:
        db.session.rollback()
        return None
    notify_review(payment, reason)
    commit_work()
    return SMS_REVIEW


def bind_held_sms(sms, payment):
    """A claim arrives for a credit held unverified: both wait for review together; commits."""
    verdict = sms_pays_payment(sms, payment)
    if verdict.has(WRONG_MODE):
        return None
    reason = verdict.why()
    try:
        won = db.session.execute(
            db.update(InboundSms)
            .where(
                InboundSms.id == sms.id,
                InboundSms.status == SMS_REVIEW,
                InboundSms.payment_id.is_(None),
            )
            .values(payment_id=payment.id, review_reason=reason, matched_at=utcnow())
            .execution_options(synchronize_session=False)
        ).rowcount
    except IntegrityError:
        won = 0
    if won != 1 or give_review_reason([payment.id], reason) != 1:
        db.session.rollback()
        return None
    notify_review(payment, reason)
    commit_work()
    return SMS_REVIEW


def flag_rival_claims(payment):
    """Other processing payments that claimed the same TrxID learn why they will not complete."""
    rivals = [
        p.id
        for p in open_claims(
            payment.brand_id,
            payment.provider,
            payment.provider_trx_id,
            exclude=payment.id,
            livemode=payment.livemode,
        )
    ]
    if rivals:
        reason = f"TrxID {payment.provider_trx_id} paid another payment ({payment.public_id})"
        give_review_reason(rivals, reason)
        commit_work()


def flag_lost_claim(payment, sms=None):
    """A claim that lost its TrxID's SMS to another payment by a moment: held for review, never left
    silent.

    `sms` is the stored text with the claim's TrxID when the caller has it. Nothing changes when
    that SMS is unbound or bound to this payment, or the payment already has a reason.
    """
    if sms is None and payment.provider_trx_id is not None:
        sms = stored_sms(
            payment.brand_id,
            payment.provider,
            payment.provider_trx_id,
            livemode=payment.livemode,
        )
    if sms is None or sms.payment_id is None or sms.payment_id == payment.id:
        return None
    winner = db.session.get(Payment, sms.payment_id)
    reason = lost_claim_reason(payment.provider_trx_id, winner)
    flagged = give_review_reason([payment.id], reason, ("processing",), not_held_for_review_sql())
    commit_work()
    return SMS_REVIEW if flagged == 1 else None


def lost_claim_reason(trx_id, winner):
    """The review reason of a claim whose TrxID another payment used (shown in the panel)."""
    return f"TrxID {trx_id} was already used by payment {winner.public_id}"[:255]


def held_sms(payment):
    """The SMS bound to this payment and held with it for review, or None."""
    return db.session.execute(
        db.select(InboundSms)
        .where(InboundSms.payment_id == payment.id, InboundSms.status == SMS_REVIEW)
        .execution_options(populate_existing=True)
    ).scalar_one_or_none()


def pay_with_bound_sms(payment, sms, settled_meanwhile, from_states=OPEN_STATUSES):
    """Match the SMS bound to a payment for review and complete the payment with it (guarded).

    Refused (INVALID_STATE) when the SMS's TrxID already paid another payment, or when another
    request settled the SMS first (`settled_meanwhile` says how).
    """
    if trx_id_paid_elsewhere(payment, sms):
        raise invalid_state(f"TrxID {sms.provider_trx_id} already paid another payment.")
    won = write_status(
        INBOUND_SMS,
        (InboundSms.id == sms.id, InboundSms.payment_id == payment.id),
        (SMS_REVIEW,),
        SMS_MATCHED,
        matched_at=utcnow(),
    )
    if won != 1:
        db.session.rollback()
        raise invalid_state(settled_meanwhile)
    return complete_with_sms(payment, sms, from_states=from_states)


def trx_id_paid_elsewhere(payment, sms):
    """Whether the SMS's TrxID already paid another payment of the brand (one TrxID pays once)."""
    return (
        db.session.execute(
            db.select(Payment.id)
            .where(
                Payment.provider == sms.provider,
                Payment.provider_trx_id == sms.provider_trx_id,
                Payment.brand_id == payment.brand_id,
                Payment.id != payment.id,
                Payment.status.in_(PAID_STATUSES),
            )
            .limit(1)
        ).first()
        is not None
    )
