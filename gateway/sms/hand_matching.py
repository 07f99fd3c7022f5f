"""The merchant's hand match: a stored SMS no claim took pays an open payment they name."""

from sqlalchemy.exc import IntegrityError

from ..clock import utcnow
from ..domain_errors import NotPermitted, ValidationFailed, field_error, invalid_state, not_found
from ..extensions import db
from ..payments.models.payment import OPEN_STATUSES
from ..states import INBOUND_SMS, SMS_MATCHED, SMS_REVIEW, SMS_UNMATCHED, SMS_UNPARSED, write_status
from .models.inbound_sms import InboundSms
from .pays import AMOUNT_UNKNOWN, WRONG_CURRENCY, WRONG_MODE, sms_pays_payment
from .settling import complete_with_sms

HAND_MATCHABLE = (SMS_UNMATCHED, SMS_UNPARSED)
# A text held for review on its own (a sender that is not official, a balance that does not follow).
HAND_MATCHABLE_HELD = (*HAND_MATCHABLE, SMS_REVIEW)


def hand_match_differences(sms, payment):
    """Why this text would not pay this payment on its own, as the automatic path sees it (may be
    empty): sms_pays_payment's problems, but for an unparsed text's amount, which the person
    matching it has read.
    """
    verdict = sms_pays_payment(sms, payment)
    return [p.message for p in verdict.problems if p.code not in (AMOUNT_UNKNOWN, WRONG_CURRENCY)]


def match_sms_by_hand(sms, payment, reason=None, may_override=False):
    """The merchant binds a stored SMS no claim took to an open payment, which completes.

    When the text differs from the payment (hand_match_differences), only an owner or admin
    (`may_override`) may match it, and only with a `reason`, which the caller stores in the audit.
    Amounts in another currency are never matched. Returns the transaction.
    """
    if sms.brand_id != payment.brand_id:
        raise not_found("payment")
    if sms.payment_id is not None or sms.status not in HAND_MATCHABLE_HELD:
        raise invalid_state(f"A {sms.status} SMS cannot be matched by hand.")
    if payment.status not in OPEN_STATUSES:
        raise invalid_state(f"A {payment.status} payment cannot be matched by hand.")
    verdict = sms_pays_payment(sms, payment)
    if verdict.has(WRONG_MODE):  # no override: a simulated text never pays a live payment
        raise not_found("payment")
    if verdict.has(WRONG_CURRENCY):
        [currency] = [p.message for p in verdict.problems if p.code == WRONG_CURRENCY]
        raise field_error("payment", currency, code="amount_mismatch")
    differences = hand_match_differences(sms, payment)
    reason = (reason or "").strip()
    if differences and not may_override:
        if reason:
            raise NotPermitted(
                "Only an owner or an admin can match a text that differs from the payment.",
                field="reason",
            )
        raise field_error("payment", "; ".join(differences), code="amount_mismatch")
    if differences and not reason:
        raise ValidationFailed(
            "; ".join(differences),
            [
                {"field": "payment", "code": "mismatch", "message": "; ".join(differences)},
                {
                    "field": "reason",
                    "code": "reason_required",
                    "message": "The text differs from the payment: say why it pays it anyway.",
                },
            ],
        )
    try:
        won = write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            HAND_MATCHABLE_HELD,
            SMS_MATCHED,
            payment_id=payment.id,
            review_reason=(f"Matched by hand: {reason}"[:255] if differences else None),
            matched_at=utcnow(),
        )
    except IntegrityError:
        db.session.rollback()
        raise invalid_state("This payment has already consumed another SMS.") from None
    if won != 1:
        db.session.rollback()
        raise invalid_state("This SMS was matched or ignored meanwhile.")
    transaction = complete_with_sms(payment, sms)
    db.session.refresh(sms)
    return transaction
