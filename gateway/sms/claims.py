"""Claims and stored SMS by provider TrxID: index probes whatever the engine's statistics say."""

from ..clock import utcnow
from ..extensions import db
from ..payments.models.payment import Payment
from ..states import PAYMENT, SMS_UNMATCHED, not_held_for_review_sql, write_status
from .models.inbound_sms import InboundSms


def same_trx_id():
    """SQL: the text carries the TrxID the payment's customer claimed (same brand, provider and
    mode: a simulated text never meets a live claim, sms/pays.py same_mode)."""
    return db.and_(
        Payment.brand_id == InboundSms.brand_id,
        Payment.livemode == InboundSms.livemode,
        Payment.provider == InboundSms.provider,
        Payment.provider_trx_id == InboundSms.provider_trx_id,
    )


def stored_sms(brand_id, provider, trx_id, *, livemode):
    """The one stored SMS holding this TrxID for the brand (a unique-index probe), or None; a text
    of the other mode (live or test) is none.
    """
    sms = db.session.execute(
        db.select(InboundSms)
        .where(
            InboundSms.brand_id == brand_id,
            InboundSms.provider == provider,
            InboundSms.provider_trx_id == trx_id,
        )
        .execution_options(populate_existing=True)
    ).scalar_one_or_none()
    return sms if sms is not None and sms.livemode == livemode else None


def open_claims(brand_id, provider, trx_id, exclude=None, *, livemode):
    """The brand's live processing payments of this mode (live or test) claiming this TrxID,
    earliest claim first.

    Only (provider, provider_trx_id) is asked of the database, so every engine probes that index
    whatever its statistics; the few payments sharing a TrxID are narrowed here.
    """
    payments = (
        db.session.execute(
            db.select(Payment)
            .where(Payment.provider == provider, Payment.provider_trx_id == trx_id)
            .execution_options(populate_existing=True)
        )
        .scalars()
        .all()
    )
    return live_claims(payments, brand_id, utcnow(), exclude, livemode=livemode)


def live_claims(payments, brand_id, now, exclude=None, *, livemode):
    """Of the payments claiming one TrxID, the brand's live processing ones of this mode (a text's:
    sms/pays.py same_mode), earliest claim first."""
    live = [
        p
        for p in payments
        if p.brand_id == brand_id
        and p.livemode == livemode
        and p.status == "processing"
        and p.expires_at > now
        and p.id != exclude
    ]
    return sorted(live, key=lambda p: (p.claimed_at or p.created_at, p.id))


def claimed_elsewhere(payment, provider, trx_id):
    """Whether another payment of the brand already holds or consumed this TrxID."""
    sms = stored_sms(payment.brand_id, provider, trx_id, livemode=payment.livemode)
    if sms is not None and sms.payment_id not in (None, payment.id):
        return True
    return bool(
        open_claims(
            payment.brand_id, provider, trx_id, exclude=payment.id, livemode=payment.livemode
        )
    )


def reopen_claim(payment):
    """Take back a processing payment's unsettled claim, so the customer can enter the TrxID again.

    The payment goes back to created with no TrxID, in the caller's transaction and uncommitted: the
    caller then submits the corrected claim through matching.submit_claim, which commits both steps
    together (and completes the payment at once when the corrected TrxID's SMS is already stored),
    or rolls back and the old claim stands. False, nothing changed, when the payment is no longer
    processing, is held for review, has expired, or has an SMS bound to it.
    """
    now = utcnow()
    bound = db.select(InboundSms.id).where(InboundSms.payment_id == payment.id).exists()
    reopened = write_status(
        PAYMENT,
        (Payment.id == payment.id, not_held_for_review_sql(), Payment.expires_at > now, ~bound),
        ("processing",),
        "created",
        provider=None,
        provider_trx_id=None,
        sender_number=None,
        claimed_at=None,
        updated_at=now,
    )
    return reopened == 1


STRANDED_BATCH = 500


def stranded_credit_ids(now, brand_id=None, slots=None):
    """Ids of stored, unmatched incoming credits that a live processing claim could match, oldest
    first.

    Driven from the few live claims (status, expires_at index) to their SMS (the TrxID unique
    index), so the many texts nobody claims are never scanned. `brand_id` and `slots` ((provider,
    TrxID) pairs) narrow it to one phone's batch.
    """
    query = (
        db.select(InboundSms.id)
        .distinct()
        .join(
            Payment,
            same_trx_id(),
        )
        .where(
            Payment.status == "processing",
            Payment.expires_at > now,
            InboundSms.status == SMS_UNMATCHED,
            InboundSms.payment_id.is_(None),
        )
    )
    if brand_id is not None:
        query = query.where(InboundSms.brand_id == brand_id)
    if slots is not None:
        if not slots:
            return []
        query = query.where(
            db.tuple_(InboundSms.provider, InboundSms.provider_trx_id).in_(sorted(slots))
        )
    ids = db.session.execute(query.order_by(InboundSms.id).limit(STRANDED_BATCH)).scalars().all()
    db.session.commit()  # end the read: each match runs in a transaction of its own
    return ids


def late_claims(brand_id, provider, trx_id, arrived_at, *, livemode):
    """The brand's payments that claimed this TrxID and were cancelled or expired before the SMS
    arrived.

    A processing payment past its expiry counts too (the sweep has not reached it yet). A payment
    cancelled after the SMS came (the merchant cancelled a review, releasing its SMS) does not: that
    SMS was seen and let go on purpose. Latest claim first: a customer who tried again claimed last.
    """
    payments = (
        db.session.execute(
            db.select(Payment)
            .where(Payment.provider == provider, Payment.provider_trx_id == trx_id)
            .execution_options(populate_existing=True)
        )
        .scalars()
        .all()
    )
    late = [
        p
        for p in payments
        if p.brand_id == brand_id and p.livemode == livemode and arrived_late(p, arrived_at)
    ]
    return sorted(late, key=lambda p: (p.claimed_at or p.created_at, p.id), reverse=True)


def arrived_late(payment, arrived_at):
    """Whether an SMS stored at `arrived_at` came after this payment stopped waiting for it."""
    if payment.status == "cancelled":
        return payment.cancelled_at is not None and payment.cancelled_at <= arrived_at
    if payment.status in ("expired", "processing"):
        return payment.expires_at <= arrived_at
    return False
