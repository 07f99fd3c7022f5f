"""The merchant's review of a payment held with its SMS: approve, or reject and free the SMS."""

from ..domain_errors import invalid_state
from ..extensions import db
from ..payments.lifecycle import fail_payment
from ..states import (
    INBOUND_SMS,
    SMS_REVIEW,
    SMS_UNMATCHED,
    payment_in_review,
    payment_in_review_sql,
    write_status,
)
from .late_money import late_sms_waiting
from .models.balance_chain import BalanceLink
from .models.inbound_sms import InboundSms
from .settling import held_sms, pay_with_bound_sms

NOT_IN_REVIEW = "This payment is not waiting for review."

in_review = payment_in_review  # the one definition lives in states.py


def approve_review(payment):
    """The merchant accepts a payment held for review: its held SMS becomes matched and the payment
    completes.

    Refused (INVALID_STATE, nothing changed) when the payment is not in review, when no SMS is held
    for it (a rival's claim was paid with its TrxID), or when the TrxID already paid another
    payment. The SMS update and the completion commit together; a racing approve, reject or cancel
    loses.
    """
    db.session.refresh(payment)
    if not in_review(payment):
        raise invalid_state(NOT_IN_REVIEW)
    sms = held_sms(payment)
    if sms is None:
        raise invalid_state(
            "No SMS is held for this payment: its TrxID paid another payment or no text arrived. "
            "Reject it, or match an SMS to it by hand."
        )
    # complete_payment rolls the SMS update back too when the payment left `processing` meanwhile.
    return pay_with_bound_sms(
        payment, sms, "The SMS held for this payment was released or matched meanwhile."
    )


def release_held_sms(payment):
    """Unbind the SMS a payment holds for review: back to `unmatched`, no payment, to be matched by
    hand.

    Runs in the caller's transaction without committing: the caller's own state change commits
    the release together with itself, or rolls it back. A credit held because its balance did
    not follow stays held on its own (`review`, no payment), so no later claim takes it unchecked.
    """
    held = db.select(BalanceLink.sms_id).where(BalanceLink.held.is_(True))
    db.session.execute(
        db.update(InboundSms)
        .where(
            InboundSms.payment_id == payment.id,
            InboundSms.status == SMS_REVIEW,
            InboundSms.id.in_(held),
        )
        .values(
            payment_id=None,
            matched_at=None,
            review_reason=db.select(BalanceLink.note)
            .where(BalanceLink.sms_id == InboundSms.id)
            .scalar_subquery(),
        )
        .execution_options(synchronize_session=False)
    )
    write_status(
        INBOUND_SMS,
        (InboundSms.payment_id == payment.id,),
        (SMS_REVIEW,),
        SMS_UNMATCHED,
        payment_id=None,
        review_reason=None,
        matched_at=None,
    )


def reject_review(payment, reason=None):
    """The merchant refuses a payment held for review: it fails, and its held SMS is released.

    The SMS goes back to `unmatched` with no payment, so it can be matched by hand to the payment
    it really pays. Release and failure commit together; nothing changes when the payment has left
    review.
    """
    db.session.refresh(payment)
    if not in_review(payment):
        raise invalid_state(NOT_IN_REVIEW)
    release_held_sms(payment)
    # fail_payment's guarded processing → failed commits the release, or rolls it back with itself.
    return fail_payment(payment, reason or payment.review_reason)


def needs_review():
    """SQL: payments waiting for the merchant, held processing ones and those with a late SMS
    alike."""
    return db.or_(payment_in_review_sql(), late_sms_waiting())
