"""Money that arrived after its payment was cancelled or expired: held for the merchant
(docs/payment-states.md).
"""

from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import invalid_state
from ..extensions import db
from ..payments.lifecycle import expire_payment
from ..payments.models.payment import Payment
from ..states import INBOUND_SMS, SMS_RETURNED, SMS_REVIEW, SMS_UNMATCHED, write_status
from .claims import late_claims
from .models.inbound_sms import InboundSms
from .pays import LATE, WRONG_MODE, sms_pays_payment
from .settling import give_review_reason, held_sms, notify_review, pay_with_bound_sms

LATE_STATUSES = tuple(LATE)
RETURNED = SMS_RETURNED  # the SMS status once the merchant has sent the late money back


def hold_late_sms(sms):
    """A credit no live claim takes, whose TrxID a cancelled or expired payment claimed: held there
    for review.

    The SMS is bound to that payment in `review` and the payment keeps its state with a review
    reason; only the merchant settles it (complete_late_payment or return_late_sms). None when no
    such claim.
    """
    for payment in late_claims(
        sms.brand_id, sms.provider, sms.provider_trx_id, sms.created_at, livemode=sms.livemode
    ):
        if payment.status == "processing" and not expire_overdue_claim(payment):
            continue  # held for review meanwhile, or settled: not a late claim after all
        held = bind_late_sms(sms, payment)
        if held is not None:
            return held
    return None


def expire_overdue_claim(payment):
    """Expire a processing payment past its expiry now, as the sweep would (payment.expired sent);
    False if it moved. Commits (commit_work).
    """
    now = utcnow()
    due = (Payment.status == "processing", Payment.expires_at <= now)
    if not expire_payment(payment, due):
        db.session.rollback()
        return False
    commit_work()
    db.session.refresh(payment)
    return True


def bind_late_sms(sms, payment):
    """Bind the SMS to the late payment in `review` and give the payment the reason (the rule's
    answer: late, with any amount or sender difference); None when a rival got either.
    """
    verdict = sms_pays_payment(sms, payment)
    if verdict.has(WRONG_MODE):
        return None
    reason = verdict.why()
    now = utcnow()
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            (SMS_UNMATCHED,),
            SMS_REVIEW,
            payment_id=payment.id,
            review_reason=reason,
            matched_at=now,
        )
    except IntegrityError:  # the payment holds another SMS already
        won = 0
    if won == 1:
        won = give_review_reason([payment.id], reason, (payment.status,))
    if won != 1:
        db.session.rollback()
        return None
    notify_review(payment, reason)
    commit_work()
    return "late"


def late_sms(payment):
    """The SMS that arrived after this payment was cancelled or expired and waits for the merchant,
    or None.
    """
    if payment.status not in LATE_STATUSES:
        return None
    return held_sms(payment)


def late_sms_waiting():
    """SQL: payments cancelled or expired whose late SMS waits for the merchant (for lists and
    counts).
    """
    waiting = db.select(InboundSms.id).where(
        InboundSms.payment_id == Payment.id, InboundSms.status == SMS_REVIEW
    )
    return db.and_(Payment.status.in_(LATE_STATUSES), waiting.exists())


def complete_late_payment(payment):
    """The merchant keeps money that came late: cancelled/expired → completed with its held SMS,
    once.

    The SMS becomes matched and the payment completes in one commit, with payment.completed through
    the outbox; refused (INVALID_STATE, nothing changed) when no late SMS waits, the TrxID already
    paid another payment, or another click or admin settled it first.
    """
    db.session.refresh(payment)
    sms = late_sms(payment)
    if sms is None:
        raise invalid_state(
            "No SMS that arrived after this payment was cancelled or expired is waiting."
        )
    # The guarded cancelled/expired → completed rolls the SMS update back too when someone else won.
    return pay_with_bound_sms(
        payment, sms, "The late SMS was settled meanwhile.", from_states=LATE_STATUSES
    )


def return_late_sms(payment, note=None):
    """The merchant sent the late money back: its SMS is closed as `returned`; the payment stays as
    it was.

    No refund row: nothing was completed, so amount_refunded, the payment's status and the
    dashboard's volumes stay untouched (docs/payment-states.md). Guarded like completion.
    """
    db.session.refresh(payment)
    sms = late_sms(payment)
    if sms is None:
        raise invalid_state(
            "No SMS that arrived after this payment was cancelled or expired is waiting."
        )
    late = db.select(Payment.id).where(Payment.id == payment.id, Payment.status.in_(LATE_STATUSES))
    resolution = f"Returned to the customer{': ' + note if note else ''}"[:255]
    won = write_status(
        INBOUND_SMS,
        (InboundSms.id == sms.id, InboundSms.payment_id.in_(late)),
        (SMS_REVIEW,),
        RETURNED,
        review_reason=resolution,
    )
    if won != 1:
        db.session.rollback()
        raise invalid_state("The late SMS was settled meanwhile.")
    reason = f"Returned to the customer. {payment.review_reason or LATE[payment.status]}"[:255]
    give_review_reason([payment.id], reason, LATE_STATUSES)
    commit_work()
    db.session.refresh(payment)
    db.session.refresh(sms)
    return sms
