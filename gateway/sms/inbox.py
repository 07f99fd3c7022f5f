"""The SMS inbox: every stored text with what the parser read, found by status, provider or TrxID,
and set aside.
"""

import uuid

from sqlalchemy.orm import selectinload

from ..answer_commit import commit_work
from ..domain_errors import InvalidState, field_error, invalid_state, not_found
from ..extensions import db
from ..payments.models.payment import OPEN_STATUSES, Payment
from ..states import INBOUND_SMS, SMS_IGNORED, write_status
from .hand_matching import HAND_MATCHABLE, HAND_MATCHABLE_HELD
from .models.inbound_sms import InboundSms
from .parsing import canonical_trx_id
from .records import enabled_templates, read_text

CANDIDATE_LIMIT = 8


def list_inbound_sms_query(brand, filters, livemode=True):
    """The brand's texts of one mode (the phones' live texts, or test mode's simulated ones), newest
    first, narrowed by status, provider and a TrxID or words of the text.
    """
    query = (
        db.select(InboundSms)
        .options(selectinload(InboundSms.payment))
        .where(InboundSms.brand_id == brand.id, InboundSms.livemode == livemode)
    )
    if filters.get("status"):
        query = query.where(InboundSms.status == filters["status"])
    if filters.get("provider"):
        query = query.where(InboundSms.provider == filters["provider"])
    if filters.get("q"):
        text = filters["q"].strip()
        words = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            db.or_(
                InboundSms.provider_trx_id == (canonical_trx_id(text) or text.upper()),
                InboundSms.body.ilike(words, escape="\\"),
                InboundSms.sender.ilike(words, escape="\\"),
            )
        )
    return query.order_by(InboundSms.created_at.desc(), InboundSms.id.desc())


def get_inbound_sms(brand, public_id):
    """A text of this brand by its server reference; NotFound for anything else, another brand's
    included.
    """
    try:
        public_id = str(uuid.UUID(str(public_id)))
    except ValueError:
        raise not_found("sms") from None
    sms = db.session.execute(
        db.select(InboundSms).where(
            InboundSms.public_id == public_id, InboundSms.brand_id == brand.id
        )
    ).scalar_one_or_none()
    if sms is None:
        raise not_found("sms")
    return sms


def parser_reading(sms):
    """What the parsers (built-in, then the brand's templates) make of the text today, e.g. kind
    `send`.
    """
    return read_text(sms.sender, sms.body, enabled_templates(sms.brand_id))


def ignore_sms(sms):
    """Set aside a text that no claim took and that pays nothing (guarded: a concurrent match
    wins)."""
    changed = write_status(
        INBOUND_SMS,
        (InboundSms.id == sms.id, InboundSms.payment_id.is_(None)),
        HAND_MATCHABLE,
        SMS_IGNORED,
    )
    if changed != 1:
        db.session.rollback()
        db.session.refresh(sms)
        if sms.status == SMS_IGNORED:
            raise invalid_state("This SMS is already ignored.")
        raise invalid_state(
            f"This SMS is {sms.status}; only a text no payment took can be ignored."
        )
    commit_work()
    db.session.refresh(sms)
    return sms


def match_candidates(sms):
    """Open live payments this text could pay: the same taka total, newest first (none when the
    amount is unknown). A phone's text is real money: never a test payment's.
    """
    if sms.amount is None or sms.status not in HAND_MATCHABLE_HELD or sms.payment_id is not None:
        return []
    return (
        db.session.execute(
            db.select(Payment)
            .where(
                Payment.brand_id == sms.brand_id,
                Payment.livemode == sms.livemode,  # sms/pays.py same_mode
                Payment.status.in_(OPEN_STATUSES),
                Payment.amount_paid == sms.amount,  # the taka total (payments/amounts.py)
            )
            .order_by(Payment.created_at.desc(), Payment.id.desc())
            .limit(CANDIDATE_LIMIT)
        )
        .scalars()
        .all()
    )


def find_payment_to_match(brand, text):
    """The open live payment a person names by payment ID or by reference; ValidationFailed on
    `payment` if none or many (a test payment is none: a phone's text is real money).
    """
    text = (text or "").strip()
    if not text:
        raise field_error(
            "payment", "Enter the payment ID or the order reference.", code="required"
        )
    query = db.select(Payment).where(Payment.brand_id == brand.id, Payment.livemode.is_(True))
    by_id = db.session.execute(query.where(Payment.public_id == text.lower())).scalars().all()
    found = (
        by_id
        or db.session.execute(
            query.where(Payment.reference == text).order_by(Payment.created_at.desc()).limit(20)
        )
        .scalars()
        .all()
    )
    open_ones = [payment for payment in found if payment.status in OPEN_STATUSES]
    if not found:
        raise field_error("payment", "No payment has this ID or reference.", code="not_found")
    if len(open_ones) > 1:
        raise field_error(
            "payment",
            "Several open payments have this reference; enter the payment ID.",
            code="ambiguous",
        )
    if not open_ones:
        message = f"That payment is {found[0].status}; only an open payment can be matched."
        raise InvalidState(
            message, [{"field": "payment", "code": "invalid_state", "message": message}]
        )
    return open_ones[0]
