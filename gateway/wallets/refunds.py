"""Refunds of payments a wallet's API paid: made at the wallet first; one the wallet does not answer
in time is kept pending (wallet_refunds) until the wallet's refund status query, or the merchant by
hand, says it was made (then recorded once, as any refund) or not (docs/wallet-apis.md)."""

from datetime import timedelta

from flask import current_app

from ..accounts.audit import asker, record_audit
from ..answer_commit import commit_work, keep_despite_error, unit_of_work
from ..clock import utcnow
from ..domain_errors import DomainError, InvalidState, RefundUndecided, invalid_state
from ..extensions import db
from ..money import format_amount
from ..payments.methods import provider_name
from ..payments.models.payment import Payment, Transaction
from ..payments.refunds import (
    REFUNDABLE_STATUSES,
    beyond_staff_limit,
    create_refund,
    exceeds_remaining,
    refund_refusal,
    refundable,
    refunded_by_user,
    reload,
)
from . import PROVIDER_MODULES, completing_wallet_payment, left_since, method_of, provider_api
from .http import CONNECT_TIMEOUT, WalletTimeout
from .models import (
    REFUND_MADE,
    REFUND_NOT_MADE,
    REFUND_PENDING,
    WalletPayment,
    WalletRefund,
)

# A pending refund is first asked for this long after it was sent (the wallet may still be busy).
CHECK_AFTER = timedelta(minutes=1)


def sending_window():
    """How long a refund's calls to its wallet may still be running (a token grant, then the refund,
    each within its connect and read timeouts): an attempt younger than this may yet be answered by
    the request that sent it, so nothing else settles it sooner."""
    read = float(current_app.config["WALLET_HTTP_TIMEOUT"])
    return timedelta(seconds=2 * (CONNECT_TIMEOUT + read))


def still_sending(attempt, now=None):
    """Whether a pending attempt's request may still be waiting for the wallet's answer."""
    return attempt.created_at > (now or utcnow()) - sending_window()


class WalletRefundPending(InvalidState):
    """A refund of a payment whose earlier wallet refund is still undecided (409): a second one
    could refund the customer twice."""

    code = "WALLET_REFUND_PENDING"


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


def send_through_wallet(transaction, amount, reason, refunded_by=None, limit=None, asked_by=None):
    """The refund_sending listener: a refund of a payment a wallet's API paid is made at the wallet
    first. Its attempt is committed pending on a connection of its own, the wallet called outside
    any database transaction, and the attempt's id returned once made (the refund's record then
    moves it to made). WalletRefused says why not (the attempt closed as not made);
    RefundUndecided leaves an unanswered one pending, the money untouched, and a second refund
    refused until the wallet (or the merchant) says; that is audited as asked by `asked_by` (a panel
    user, or a name such as "API key #3"), kept although the request ends in the error. A crash
    during the call leaves it pending too.
    """
    row = completing_wallet_payment(transaction.payment_id)
    if row is None:
        return None
    attempt_id = reserve_attempt(transaction, row, amount, reason, refunded_by, limit)
    try:
        made_as = provider_api(row.provider).refund(
            transaction.payment, method_of(row), amount, reason, row=row
        )
    except WalletTimeout:
        audit_pending(attempt_id, transaction.payment, row.provider, amount, reason, asked_by)
        raise RefundUndecided(undecided_message(row.provider), pending_id=attempt_id) from None
    except DomainError as refused:  # refused, or never reached: not made
        with db.engine.begin() as connection:
            connection.execute(close_attempt(attempt_id, REFUND_NOT_MADE, refused.message))
        raise
    note_refund_id(attempt_id, made_as)
    return attempt_id


def reserve_attempt(transaction, row, amount, reason, refunded_by, limit):
    """Commit the refund's attempt, pending, on a connection of its own; its id. Under the
    transaction's row (PostgreSQL's row lock, SQLite's write lock) it must fit what remains and the
    staff member's limit, and no other attempt of the payment may be pending: of two racing
    refunds, the second waits here, then is refused (WalletRefundPending) rather than sent twice.
    """
    payment_id, now = transaction.payment_id, utcnow()
    with db.engine.begin() as connection:
        connection.execute(
            db.update(Transaction)
            .where(Transaction.id == transaction.id)
            .values(amount_refunded=Transaction.amount_refunded)
        )
        pending = connection.execute(
            db.select(WalletRefund.amount).where(
                WalletRefund.payment_id == payment_id, WalletRefund.state == REFUND_PENDING
            )
        ).first()
        refunded, status = connection.execute(
            db.select(Transaction.amount_refunded, Transaction.status).where(
                Transaction.id == transaction.id
            )
        ).one()
        done = None if limit is None else refunded_by_user(transaction.id, refunded_by, connection)
        # As add_refunded will have it: a refunded transaction takes nothing more, whatever the
        # ceiling (refund_fee turned on since).
        fits = status in REFUNDABLE_STATUSES and refunded + amount <= refundable(transaction)
        if pending is None and fits and (done is None or done + amount <= limit):
            return connection.execute(
                db.insert(WalletRefund).values(
                    payment_id=payment_id,
                    wallet_payment_id=row.id,
                    amount=amount,
                    reason=reason,
                    refunded_by_id=refunded_by,
                    state=REFUND_PENDING,
                    created_at=now,
                    updated_at=now,
                )
            ).inserted_primary_key[0]
    if pending is not None:
        raise WalletRefundPending(
            f"A refund of {format_amount(pending.amount)} {transaction.currency} of this payment "
            f"is pending at {provider_name(row.provider)}: the wallet has not confirmed it yet. "
            "Refund again once it is settled (made or not made)."
        )
    if not fits:
        raise refund_refusal(reload(transaction), amount) or exceeds_remaining(transaction, amount)
    raise beyond_staff_limit(limit, done, transaction.currency)


def close_attempt(attempt_id, state, note):
    """The UPDATE that closes a pending attempt (made elsewhere or not made), noting why."""
    return (
        db.update(WalletRefund)
        .where(WalletRefund.id == attempt_id, WalletRefund.state == REFUND_PENDING)
        .values(state=state, last_error=note[:255], updated_at=utcnow())
    )


def record_wallet_refund(refund, transaction, undecided_id=None):
    """The refund_recording listener: the attempt made at the wallet is recorded as this refund."""
    if undecided_id is not None:
        record_confirmed(refund, undecided_id)


def audit_pending(attempt_id, payment, provider, amount, reason, asked_by):
    """The audit row of a refund left pending (who asked: a panel user or a named actor such as an
    API key; the amount, the reason), kept although an error ends the request: the edge commits it,
    a keyed request with its stored answer."""
    user, who = asker(asked_by)
    with unit_of_work():
        record_audit(
            user,
            "payment.wallet_refund_pending",
            payment,
            {
                "wallet_refund_id": attempt_id,
                "amount": format_amount(amount),
                "reason": reason,
                "wallet": provider_name(provider),
            },
            brand_id=payment.brand_id,
            who=who,
        )
    keep_despite_error()


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
        .returning(WalletRefund.provider_refund_id)
    ).first()
    if moved is None:
        raise invalid_state("This wallet refund was already settled.")
    refund.provider_refund_id = moved.provider_refund_id
    return refund.provider_refund_id


def note_refund_id(attempt_id, provider_refund_id):
    """Keep the wallet's id of a pending attempt's refund, for the record that follows."""
    db.session.execute(
        db.update(WalletRefund)
        .where(WalletRefund.id == attempt_id, WalletRefund.state == REFUND_PENDING)
        .values(provider_refund_id=str(provider_refund_id)[:100])
    )


def record_made(attempt, provider_refund_id=None):
    """The wallet made the pending refund: recorded through create_refund, once (the refund, its
    event and webhook, the payment's money); InvalidState when it was settled meanwhile."""
    payment = db.session.get(Payment, attempt.payment_id)
    if provider_refund_id:
        note_refund_id(attempt.id, provider_refund_id)
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
    moved = db.session.execute(close_attempt(attempt.id, REFUND_NOT_MADE, note)).rowcount
    commit_work()
    return moved == 1


def settle_pending_wallet_refunds(now=None):
    """The periodic check: each refund pending over CHECK_AFTER at a wallet with a refund status
    query is asked for, then recorded once or closed; the states it reached. One still within its
    sending window is left to the request that sent it."""
    settled = []
    before = (now or utcnow()) - max(CHECK_AFTER, sending_window())
    # A wallet without a refund status query leaves its pending refunds to the merchant (panel).
    askable = db.select(WalletPayment.id).where(
        WalletPayment.provider.in_([p for p in PROVIDER_MODULES if asks_refund_status(p)])
    )
    for attempt in left_since(
        WalletRefund, REFUND_PENDING, before, WalletRefund.wallet_payment_id.in_(askable)
    ):
        trip = trip_of(attempt)
        api = provider_api(trip.provider)
        payment = db.session.get(Payment, attempt.payment_id)
        name = provider_name(trip.provider)
        try:
            made_as = api.refund_status(payment, method_of(trip), attempt, row=trip)
            made, note = made_as is not None, f"{name} has no such refund."
            settle_attempt(attempt, payment, made, made_as, note, who=f"{name} refund status query")
            settled.append(REFUND_MADE if made else REFUND_NOT_MADE)
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
    if still_sending(attempt):
        raise invalid_state(
            f"This refund is still being sent to {provider_name(trip_of(attempt).provider)}: "
            "its answer may yet come. Settle it in a minute if it is still pending."
        )
    payment = db.session.get(Payment, attempt.payment_id)
    settle_attempt(attempt, payment, made, provider_refund_id, "Marked not made by hand.", user)


def settle_attempt(attempt, payment, made, provider_refund_id=None, note=None, user=None, who=None):
    """A pending refund recorded as made (the refund, once) or closed as not made (with `note`),
    and its audit row naming who said so (a panel user, or `who`: the wallet's status query), in
    one unit of work; InvalidState when it was settled meanwhile."""
    details = {"wallet_refund_id": attempt.id, "amount": format_amount(attempt.amount)}
    with unit_of_work():
        if made:
            refund = record_made(attempt, provider_refund_id)
            details.update(refund_id=refund.id, provider_refund_id=refund.provider_refund_id)
        elif not mark_not_made(attempt, note):
            raise invalid_state("This wallet refund was already settled.")
        action = "payment.wallet_refund_made" if made else "payment.wallet_refund_not_made"
        record_audit(user, action, payment, details, brand_id=payment.brand_id, who=who)


def settle_wallets(now=None):
    """The settle-wallets job: payments left in between, then refunds left pending."""
    from . import settle_started_wallet_payments

    return settle_started_wallet_payments(now) + settle_pending_wallet_refunds(now)
