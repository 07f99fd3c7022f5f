"""Credits that cannot pay by themselves (docs/sms-trust.md): held for review, released when their
balance chain heals.
"""

from sqlalchemy.exc import IntegrityError

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import DomainError
from ..extensions import db
from ..payments.models.payment import Payment
from ..states import INBOUND_SMS, SMS_MATCHED, SMS_REVIEW, SMS_UNMATCHED, write_status
from .claims import open_claims
from .matching import match_sms_to_claim
from .models.inbound_sms import InboundSms
from .pays import sms_pays_payment
from .review import approve_review, in_review
from .settling import give_review_reason, notify_review


def hold_unverified_credit(sms, reason):
    """Hold a stored credit for review instead of letting it pay: the one writer of that review.

    The text (`unmatched`) goes to `review` with `reason`; when a live claim waits for its TrxID it
    is bound to that payment, which keeps `processing` with the reason and whatever else keeps the
    text from paying it (sms_pays_payment), and the phones are told.
    Runs in the caller's transaction without committing; True when the text was held.
    """
    claims = (
        open_claims(sms.brand_id, sms.provider, sms.provider_trx_id, livemode=sms.livemode)
        if sms.provider_trx_id
        else []
    )
    if claims:
        payment = next((p for p in claims if p.amount_paid == sms.amount), claims[0])
        full = sms_pays_payment(sms, payment).why(first=reason)
        savepoint = db.session.begin_nested()
        try:
            bound = (
                write_status(
                    INBOUND_SMS,
                    (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
                    (SMS_UNMATCHED,),
                    SMS_REVIEW,
                    payment_id=payment.id,
                    review_reason=full,
                    matched_at=utcnow(),
                )
                == 1
                and give_review_reason([payment.id], full) == 1
            )
        except IntegrityError:  # the payment already consumed another SMS
            bound = False
        if bound:
            savepoint.commit()
            notify_review(payment, full)
            return True
        savepoint.rollback()
    return (
        write_status(
            INBOUND_SMS,
            (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
            (SMS_UNMATCHED,),
            SMS_REVIEW,
            review_reason=reason[:255],
        )
        == 1
    )


def release_verified_credit(sms):
    """A held credit whose balance chain healed: it pays as if it had followed at once.

    A text held alone goes back to `unmatched` and meets its claim; one held with a payment whose
    only reason was the chain completes it (what else sms_pays_payment finds stays in review).
    Commits (commit_work).
    """
    if sms.status != SMS_REVIEW:
        return None
    if sms.payment_id is None:
        if (
            write_status(
                INBOUND_SMS,
                (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
                (SMS_REVIEW,),
                SMS_UNMATCHED,
                review_reason=None,
                matched_at=None,
            )
            != 1
        ):
            db.session.rollback()
            return None
        commit_work()
        db.session.refresh(sms)
        return match_sms_to_claim(sms)
    payment = db.session.get(Payment, sms.payment_id, populate_existing=True)
    if payment is None or not in_review(payment):
        return None
    verdict = sms_pays_payment(sms, payment)
    if not verdict.pays:
        give_review_reason([payment.id], verdict.why())
        db.session.execute(
            db.update(InboundSms)
            .where(InboundSms.id == sms.id, InboundSms.status == SMS_REVIEW)
            .values(review_reason=verdict.why())
            .execution_options(synchronize_session=False)
        )
        commit_work()
        return SMS_REVIEW
    try:
        approve_review(payment)
    except DomainError:
        return None
    return SMS_MATCHED
