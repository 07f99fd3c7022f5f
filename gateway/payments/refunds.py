"""Refunds: full or partial, never more than what remains of what was paid (the fee included where
the brand refunds it), also under concurrent requests."""

from decimal import Decimal

from ..accounts.audit import asker, record_audit
from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..db_types import row_id
from ..domain_errors import (
    DomainError,
    NotPermitted,
    RefundExceedsRemaining,
    field_error,
    invalid_state,
    not_found,
)
from ..extensions import db
from ..money import format_amount
from ..states import (
    PAYMENT,
    REFUND_COMPLETED,
    TRANSACTION,
    TRANSACTION_COMPLETED,
    TRANSACTION_PARTIALLY_REFUNDED,
    TRANSACTION_REFUNDED,
    write_status,
)
from ..webhooks.events import emit_event
from .models.payment import PAID_STATUSES, Payment, Refund, Transaction
from .signals import refund_recording, refund_sending
from .transactions import get_transaction, of_mode

# A refunded transaction is still "paid" but has nothing left: that is RefundExceedsRemaining, not
# InvalidState.
REFUNDABLE_STATUSES = (TRANSACTION_COMPLETED, TRANSACTION_PARTIALLY_REFUNDED)


def create_refund(
    brand,
    trx_ref,
    amount=None,
    reason=None,
    refunded_by=None,
    limit=None,
    livemode=True,
    undecided_id=None,
    asked_by=None,
    audit_extra=None,
):
    """Refund `amount` (default: the remainder) of a transaction, found by trx_id or integer id
    among the brand's of this mode (a test key's refund of a live payment is NotFound).

    `refunded_by` is the panel user's id, recorded on the refund; with `limit` (a staff member's)
    that user's refunds of this payment may not exceed it in total, also under concurrent requests.
    A refund a listener makes elsewhere first (refund_sending: a wallet's API) is recorded once it
    says it was made; its refusal (a DomainError) or its silence (RefundUndecided) writes nothing
    here. `undecided_id` records such an attempt confirmed since (the wallet's status query, the
    merchant): the listener settles that attempt instead of sending it again.
    `asked_by` (the panel user, or a name such as "API key #3") is who asked: the refund's
    `payment.refund` audit row (with `audit_extra`, what the front door adds: {"via": "api", …})
    commits with it, and the audit row of a refund the wallet leaves undecided names them too. A
    refund nobody asks for here (a pending one recorded once confirmed) is audited by whoever
    settles it.
    """
    if amount is not None and amount <= 0:
        raise field_error("amount", "Amount must be greater than zero.")
    transaction = find_transaction(brand, trx_ref, livemode)
    refusal = refund_refusal(transaction, amount)
    if refusal is not None:
        raise refusal
    if amount is None:
        amount = refund_remaining(transaction)
    if undecided_id is None:
        # Made elsewhere first (a wallet's API), before any write of the refund: that call never
        # holds the database (on SQLite, its one write lock) for as long as the wallet takes.
        undecided_id = made_elsewhere(transaction, amount, reason, refunded_by, limit, asked_by)
    now = utcnow()
    fee = refundable(transaction) - transaction.amount
    # Guarded UPDATEs: the limit is checked by the database against the row as it is now,
    # so two racing refunds cannot both fit into the same remainder.
    if not add_refunded(Transaction, transaction.id, amount, fee) or not add_refunded(
        Payment, transaction.payment_id, amount, fee, updated_at=now
    ):
        db.session.rollback()
        raise refund_refusal(reload(transaction), amount) or exceeds_remaining(transaction, amount)
    # The guarded UPDATEs hold the transaction's row until commit, so this read, a statement of its
    # own after them, sees every refund of it committed before: two racing refunds by one staff
    # member cannot both fit under the limit (on SQLite the write lock serialises them the same).
    if limit is not None:
        done = refunded_by_user(transaction.id, refunded_by)
        if done + amount > limit:
            db.session.rollback()
            raise beyond_staff_limit(limit, done, transaction.currency)
    refund = Refund(
        brand_id=brand.id,
        livemode=transaction.payment.livemode,
        transaction_id=transaction.id,
        amount=amount,
        reason=reason or None,
        status=REFUND_COMPLETED,
        created_at=now,
        refunded_by_id=refunded_by,
    )
    db.session.add(refund)
    db.session.flush()
    try:
        refund_recording.send(refund, transaction=transaction, undecided_id=undecided_id)
    except DomainError:
        db.session.rollback()
        raise
    # refund.completed event is recorded here, in the same transaction
    emit_event(
        "refund.completed",
        brand,
        payment=transaction.payment,
        transaction=transaction,
        refund=refund,
    )
    # One commit for the refund and its audit row; with an Idempotency-Key, with its stored answer
    # too.
    with unit_of_work():
        if asked_by is not None:
            user, who = asker(asked_by)
            details = {
                "refund_id": refund.id,
                "amount": format_amount(refund.amount),
                "reason": refund.reason,
                **(audit_extra or {}),
            }
            record_audit(
                user, "payment.refund", transaction.payment, details, brand_id=brand.id, who=who
            )
    return refund


def made_elsewhere(transaction, amount, reason, refunded_by, limit, asked_by=None):
    """The id of the attempt a refund_sending listener made elsewhere for this refund (a wallet's
    API), or None when no listener makes it (the refund is ours alone)."""
    sent = refund_sending.send(
        transaction,
        amount=amount,
        reason=reason,
        refunded_by=refunded_by,
        limit=limit,
        asked_by=asked_by,
    )
    return next((made for _, made in sent if made is not None), None)


def find_transaction(brand, trx_ref, livemode=True):
    """The brand's transaction of this mode by trx_id (a string) or internal id (an int); NotFound
    otherwise."""
    if isinstance(trx_ref, int):
        return get_transaction_by_id(brand, trx_ref, livemode)
    return get_transaction(brand, trx_ref, livemode)


def get_transaction_by_id(brand, transaction_id, livemode=True):
    """The brand's transaction of this mode by its integer id; NotFound for any other."""
    query = db.select(Transaction).where(
        Transaction.id == transaction_id, Transaction.brand_id == brand.id
    )
    transaction = db.session.execute(of_mode(query, livemode)).scalar_one_or_none()
    if transaction is None:
        raise not_found("transaction")
    return transaction


def refundable(transaction):
    """The most a transaction can refund in total: its amount, plus the fee its customer paid
    when the brand refunds fees (brands.refund_fee). A transaction's fee is its BDT payment's (0
    for another currency: that fee was taka, the refund is in the payment's currency), so a refund
    never exceeds what was paid (docs/methods.md)."""
    fee = transaction.fee if transaction.payment.brand.refund_fee else 0
    return transaction.amount + fee


def refund_remaining(transaction):
    """What is left to refund on a transaction: refundable() less what was refunded, never below
    zero, and nothing once it is refunded: turning brands.refund_fee on later raises the ceiling
    but reopens no refunded transaction (add_refunded would refuse the row)."""
    if transaction.status not in REFUNDABLE_STATUSES:
        return Decimal("0.00")
    return max(refundable(transaction) - transaction.amount_refunded, Decimal("0.00"))


def add_refunded(model, row_id, amount, fee=0, **values):
    """Add `amount` to a row's amount_refunded if it still fits under its amount + `fee` (the fee
    refundable, refundable()); True when this writer won."""
    total = model.amount_refunded + amount
    ceiling = model.amount + fee
    machine = PAYMENT if model is Payment else TRANSACTION
    return (
        write_status(
            machine,
            (model.id == row_id, total <= ceiling),
            REFUNDABLE_STATUSES,
            (TRANSACTION_PARTIALLY_REFUNDED, TRANSACTION_REFUNDED),
            amount_refunded=total,
            status_value=db.case(
                (total >= ceiling, TRANSACTION_REFUNDED), else_=TRANSACTION_PARTIALLY_REFUNDED
            ),
            **values,
        )
        == 1
    )


def refund_refusal(transaction, amount):
    """Why this refund cannot be made on the transaction as loaded, or None when it can."""
    payment = transaction.payment
    if transaction.status not in PAID_STATUSES or payment.status not in PAID_STATUSES:
        return invalid_state(
            f"Only a completed payment can be refunded; this one is {payment.status}."
        )
    remaining = refund_remaining(transaction)
    if remaining <= 0 or (amount is not None and amount > remaining):
        return exceeds_remaining(transaction, amount)
    return None


def refunded_by_user(transaction_id, user_id, connection=None):
    """What this user has refunded of a transaction in total (a refund is recorded completed); read
    on `connection` when given, else in the session."""
    return (
        (connection or db.session)
        .execute(
            db.select(db.func.coalesce(db.func.sum(Refund.amount), 0)).where(
                Refund.transaction_id == transaction_id,
                Refund.refunded_by_id == user_id,
                Refund.status == REFUND_COMPLETED,
            )
        )
        .scalar_one()
    )


def beyond_staff_limit(limit, done, currency):
    """NotPermitted on the amount: a staff member's refunds of one payment would pass the limit."""
    message = f"Staff can refund at most {format_amount(limit)} {currency} of a payment in total"
    if done:
        message += f"; you have already refunded {format_amount(done)} {currency} of this one"
    return NotPermitted(message + ".", field="amount")


def exceeds_remaining(transaction, amount):
    """RefundExceedsRemaining for a refund larger than what remains refundable."""
    remaining = format_amount(refund_remaining(transaction))
    message = f"Only {remaining} {transaction.currency} remains refundable on {transaction.trx_id}."
    return RefundExceedsRemaining(
        message, [{"field": "amount", "code": "exceeds_remaining", "message": message}]
    )


def reload(transaction):
    """The transaction and its payment as committed now, after a lost race."""
    db.session.refresh(transaction)
    db.session.refresh(transaction.payment)
    return transaction


def list_refunds_query(brand, filters, livemode=True):
    """The brand's refunds of one mode, newest first, narrowed by trx_id and dates."""
    query = db.select(Refund).where(Refund.brand_id == brand.id, Refund.livemode == bool(livemode))
    if filters.get("trx_id"):
        query = query.join(Transaction, Refund.transaction_id == Transaction.id).where(
            Transaction.trx_id == filters["trx_id"].strip().upper()
        )
    if filters.get("from"):
        query = query.where(Refund.created_at >= filters["from"])
    if filters.get("to"):
        query = query.where(Refund.created_at <= filters["to"])
    return query.options(db.selectinload(Refund.transaction)).order_by(
        Refund.created_at.desc(), Refund.id.desc()
    )


def get_refund(brand, refund_id, livemode=True):
    """A refund of this brand and mode by id (digits); NotFound for anything else, another brand's
    or the other mode's included."""
    refund_id = row_id(refund_id)
    refund = None
    if refund_id is not None:
        refund = db.session.execute(
            db.select(Refund).where(
                Refund.id == refund_id,
                Refund.brand_id == brand.id,
                Refund.livemode == bool(livemode),
            )
        ).scalar_one_or_none()
    if refund is None:
        raise not_found("refund")
    return refund
