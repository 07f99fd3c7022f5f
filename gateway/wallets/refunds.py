"""Refunds of payments a wallet's API paid: made at the wallet first; one the wallet does not answer
in time is kept pending (wallet_refunds) until the wallet's refund status query, or the merchant by
hand, says it was made (then recorded once, as any refund) or not (docs/wallet-apis.md)."""

from datetime import timedelta

from ..accounts.audit import record_audit
from ..answer_commit import commit_work, unit_of_work
from ..clock import utcnow
from ..domain_errors import DomainError, InvalidState, RefundUndecided, invalid_state
from ..extensions import db
from ..money import format_amount
from ..payments.methods import PROVIDER_NAMES
from ..payments.models.payment import Payment
from ..payments.refunds import create_refund
from . import completing_wallet_payment, left_since, method_of, provider_api
from .http import WalletTimeout
from .models import (
    REFUND_MADE,
    REFUND_NOT_MADE,
    REFUND_PENDING,
    WalletPayment,
    WalletRefund,
)

# A pending refund is first asked for this long after it was sent (the wallet may still be busy).
CHECK_AFTER = timedelta(minutes=1)


class WalletRefundPending(InvalidState):
    """A refund of a payment whose earlier wallet refund is still undecided (409): a second one
    could refund the customer twice."""

    code = "WALLET_REFUND_PENDING"


def provider_name(provider):
    """The wallet's name as merchants know it."""
    return PROVIDER_NAMES.get(provider, provider)


def asks_refund_status(provider):
    """Whether the wallet can be asked about a refund it left unanswered (else the merchant
    says)."""
    return hasattr(provider_api(provider), "refund_status")


def pending_refund(payment_id):
    """The payment's wallet refund still waiting for the wallet's word, or None."""
    return db.session.execute(
        db.select(WalletRefund)
        .where(WalletRefund.payment_id == payment_id, WalletRefund.state == REFUND_PENDING)
        .order_by(WalletRefund.id)
        .limit(1)
    ).scalar_one_or_none()


def refund_through_wallet(refund, transaction, undecided_id=None, asked_by=None):
    """The refund_recording listener: a refund of a payment paid through a wallet's API is made at
    the wallet first (its refund id kept on the refund); WalletRefused says why not, RefundUndecided
    keeps an unanswered one pending, audited as asked by `asked_by`. With `undecided_id`, the
    pending refund confirmed since."""
    if undecided_id is not None:
        return record_confirmed(refund, undecided_id)
    pending = pending_refund(transaction.payment_id)
    if pending is not None:
        raise WalletRefundPending(
            f"A refund of {format_amount(pending.amount)} {transaction.currency} of this payment "
            f"is pending at {provider_name(trip_of(pending).provider)}: the wallet has not "
            "confirmed it yet. Refund again once it is settled (made or not made)."
        )
    row = completing_wallet_payment(transaction.payment_id)
    if row is None:
        return None
    try:
        refund.provider_refund_id = provider_api(row.provider).refund(
            transaction.payment, method_of(row), refund.amount, refund.reason, row=row
        )
    except WalletTimeout:
        # Sent, but no answer: the wallet may have refunded. Kept pending, the money untouched,
        # and a second refund refused until the wallet (or the merchant) says.
        now = utcnow()
        attempt = WalletRefund(
            payment_id=transaction.payment_id,
            wallet_payment_id=row.id,
            amount=refund.amount,
            reason=refund.reason,
            refunded_by_id=refund.refunded_by_id,
            state=REFUND_PENDING,
            created_at=now,
            updated_at=now,
        )
        raise RefundUndecided(
            undecided_message(row.provider),
            keep=lambda: keep_pending(attempt, transaction.payment, row.provider, asked_by),
        ) from None
    return refund.provider_refund_id


def keep_pending(attempt, payment, provider, asked_by):
    """Write the pending attempt with its audit row (who asked: a panel user or a named actor such
    as an API key; the amount, the reason), to commit together; the attempt's id."""
    user, who = (
        (None, asked_by) if asked_by is None or isinstance(asked_by, str) else (asked_by, None)
    )
    with unit_of_work():
        db.session.add(attempt)
        db.session.flush()
        record_audit(
            user,
            "payment.wallet_refund_pending",
            payment,
            {
                "wallet_refund_id": attempt.id,
                "amount": format_amount(attempt.amount),
                "reason": attempt.reason,
                "wallet": provider_name(provider),
            },
            brand_id=payment.brand_id,
            who=who,
        )
    return attempt.id


def undecided_message(provider):
    """What the merchant is told of a refund the wallet did not answer in time."""
    name = provider_name(provider)
    checked = (
        f"it is being checked with {name} and recorded once {name} confirms it"
        if asks_refund_status(provider)
        else f"{name} cannot be asked, so check it in {name}'s merchant portal and mark it made "
        "or not made on the payment's page"
    )
    return (
        f"{name} did not answer the refund in time: it may have been made. It is pending: "
        f"{checked}. Do not refund again meanwhile."
    )


def trip_of(attempt):
    """The wallet trip a pending refund went through."""
    return db.session.get(WalletPayment, attempt.wallet_payment_id)


def record_confirmed(refund, undecided_id):
    """The refund a pending wallet refund turned out to be: the attempt moves to made (a guarded
    UPDATE: of two settling it, one records the refund) and lends its wallet refund id."""
    moved = db.session.execute(
        db.update(WalletRefund)
        .where(WalletRefund.id == undecided_id, WalletRefund.state == REFUND_PENDING)
        .values(state=REFUND_MADE, refund_id=refund.id, updated_at=utcnow())
    ).rowcount
    if moved != 1:
        raise invalid_state("This wallet refund was already settled.")
    refund.provider_refund_id = db.session.execute(
        db.select(WalletRefund.provider_refund_id).where(WalletRefund.id == undecided_id)
    ).scalar_one()
    return refund.provider_refund_id


def record_made(attempt, provider_refund_id=None):
    """The wallet made the pending refund: recorded through create_refund, once (the refund, its
    event and webhook, the payment's money); InvalidState when it was settled meanwhile."""
    payment = db.session.get(Payment, attempt.payment_id)
    if provider_refund_id:
        db.session.execute(
            db.update(WalletRefund)
            .where(WalletRefund.id == attempt.id, WalletRefund.state == REFUND_PENDING)
            .values(provider_refund_id=str(provider_refund_id)[:100])
        )
    return create_refund(
        payment.brand,
        payment.transaction.id,
        attempt.amount,
        attempt.reason,
        refunded_by=attempt.refunded_by_id,
        livemode=payment.livemode,
        undecided_id=attempt.id,
    )


def mark_not_made(attempt, note):
    """The wallet has no such refund: the attempt is closed and the payment may be refunded again;
    False when it was settled meanwhile."""
    moved = db.session.execute(
        db.update(WalletRefund)
        .where(WalletRefund.id == attempt.id, WalletRefund.state == REFUND_PENDING)
        .values(state=REFUND_NOT_MADE, last_error=note[:255], updated_at=utcnow())
    ).rowcount
    commit_work()
    return moved == 1


def settle_pending_wallet_refunds(now=None):
    """The periodic check: each refund pending over CHECK_AFTER at a wallet with a refund status
    query is asked for, then recorded once or closed; the states it reached."""
    settled = []
    for attempt in left_since(WalletRefund, REFUND_PENDING, (now or utcnow()) - CHECK_AFTER):
        trip = trip_of(attempt)
        if not asks_refund_status(trip.provider):
            continue  # the merchant settles it by hand (panel)
        api = provider_api(trip.provider)
        payment = db.session.get(Payment, attempt.payment_id)
        try:
            made_as = api.refund_status(payment, method_of(trip), attempt, row=trip)
            if made_as is None:
                name = provider_name(trip.provider)
                if mark_not_made(attempt, f"{name} has no such refund."):
                    settled.append(REFUND_NOT_MADE)
            else:
                record_made(attempt, made_as)
                settled.append(REFUND_MADE)
        except DomainError as error:
            # The wallet out of reach again, or settled meanwhile: the next round sees it.
            db.session.rollback()
            note_refund_error(attempt, error.message)
    return settled


def note_refund_error(attempt, message):
    """Keep what went wrong asking for a pending refund (shown on the payment's page)."""
    db.session.execute(
        db.update(WalletRefund)
        .where(WalletRefund.id == attempt.id, WalletRefund.state == REFUND_PENDING)
        .values(last_error=message[:255], updated_at=utcnow())
    )
    commit_work()


def resolve_by_hand(attempt, made, user, provider_refund_id=None):
    """The merchant looked in the wallet's portal: the pending refund was made (recorded as a
    refund) or not (closed); audited. InvalidState when it was settled meanwhile."""
    payment = db.session.get(Payment, attempt.payment_id)
    details = {"wallet_refund_id": attempt.id, "amount": format_amount(attempt.amount)}
    with unit_of_work():
        if made:
            refund = record_made(attempt, provider_refund_id)
            details.update(refund_id=refund.id, provider_refund_id=refund.provider_refund_id)
        elif not mark_not_made(attempt, "Marked not made by hand."):
            raise invalid_state("This wallet refund was already settled.")
        action = "payment.wallet_refund_made" if made else "payment.wallet_refund_not_made"
        record_audit(user, action, payment, details)


def settle_wallets(now=None):
    """The settle-wallets job: payments left in between, then refunds left pending."""
    from . import settle_started_wallet_payments

    return settle_started_wallet_payments(now) + settle_pending_wallet_refunds(now)
