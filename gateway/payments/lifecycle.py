"""Payments: created by the merchant, completed once, cancelled or expired while open."""

import base64
import secrets
import uuid
from datetime import timedelta

from flask import current_app
from sqlalchemy import bindparam
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload
from sqlalchemy.orm.attributes import set_committed_value

from ..accounts.models.brand import Brand
from ..answer_commit import commit_work, unit_of_work
from ..clock import utcnow
from ..domain_errors import invalid_state, not_found
from ..extensions import db, insert_persistent
from ..states import (
    PAYMENT,
    PAYMENT_CANCELLED,
    PAYMENT_COMPLETED,
    PAYMENT_CREATED,
    PAYMENT_EXPIRED,
    PAYMENT_FAILED,
    PAYMENT_PROCESSING,
    TRANSACTION_COMPLETED,
    not_held_for_review_sql,
    write_status,
)
from ..webhooks.callback_urls import check_callback_url
from ..webhooks.events import Emission, emit_event, emit_events
from .amounts import BDT, fix_amounts
from .currencies import currency_refusal, rate_for
from .customers import upsert_customer_id
from .models.payment import OPEN_STATUSES, Payment, Transaction
from .signals import payment_cancelled, payment_closed, payments_completed


def new_trx_id():
    """The service's own transaction reference: TRX + 12 upper-case base32 characters."""
    return "TRX" + base64.b32encode(secrets.token_bytes(10)).decode()[:12]


def checkout_url(payment):
    """Where the merchant sends the customer: the brand's origin + /checkout/<token> (a Payment or a
    view row).
    """
    base = payment.brand_base_url or current_app.config["BASE_URL"]
    return f"{base.rstrip('/')}/checkout/{payment.token}"


def receipt_url(payment):
    """The customer's receipt of a paid payment (checkout/receipts.py): its checkout link +
    /receipt."""
    return f"{checkout_url(payment)}/receipt"


def payment_ttl(brand):
    """How long a payment stays open: the brand's own setting, else PAYMENT_TTL."""
    return timedelta(seconds=brand.payment_ttl or current_app.config["PAYMENT_TTL"])


def create_payment(brand, data, livemode=True):
    """Record a payment intent in `created` and upsert its customer (a test one with
    `livemode=False`, the mode of the key or link or invoice it comes through)."""
    currency = data["currency"]
    if currency not in brand.currency_list:
        raise currency_refusal(brand, currency)
    check_callback_url(data.get("callback_url"))
    now = utcnow()
    # Built before the first write: SQLite's write lock, taken by the customer's upsert, is then
    # held for the two INSERTs and the commit alone (other web processes wait for it).
    payment = Payment(
        public_id=str(uuid.uuid4()),
        token=secrets.token_urlsafe(24),
        brand_id=brand.id,
        brand=brand,
        livemode=bool(livemode),
        reference=data.get("reference"),
        amount=data["amount"],
        amount_refunded=0,
        currency=currency,
        status=PAYMENT_CREATED,
        callback_url=data.get("callback_url"),
        redirect_url=data.get("redirect_url"),
        cancel_url=data.get("cancel_url"),
        customer_name=data.get("customer_name"),
        customer_email=data.get("customer_mail"),
        customer_phone=data.get("customer_phone"),
        metadata_json=data.get("metadata"),
        invoice_id=data.get("invoice_id"),  # set by gateway/invoices, never by the API body
        created_at=now,
        updated_at=now,
        expires_at=now + payment_ttl(brand),
    )
    # The taka amount at today's rate, fixed now: a later rate change never touches this payment.
    fix_amounts(payment, rate_for(brand, currency))
    payment.customer_id = upsert_customer_id(
        brand,
        data.get("customer_name"),
        data.get("customer_mail"),
        data.get("customer_phone"),
        livemode=payment.livemode,
    )
    insert_persistent(payment)
    # With an Idempotency-Key, the payment commits together with its stored answer.
    commit_work(keep_loaded=True)
    return payment


_P, _T, _B = Payment.__table__, Transaction.__table__, Brand.__table__
# What the API renders of a payment (PaymentSchema), with its trx_id and its brand's origin, in one
# Core query: the merchant reads a payment back after every webhook, and loading ORM objects for it
# cost more than the rest of that request. Labels match the Payment attributes the schema reads.
PAYMENT_VIEW = db.select(
    _P.c.public_id,
    _P.c.token,
    _P.c.status,
    _P.c.reference,
    _P.c.amount,
    _P.c.amount_refunded,
    _P.c.currency,
    _P.c.amount_bdt,
    _P.c.exchange_rate,
    _P.c.fee,
    _P.c.amount_paid,
    _P.c.provider,
    _P.c.provider_trx_id,
    _P.c.review_reason,
    _P.c.created_at,
    _P.c.completed_at,
    _P.c.expires_at,
    _P.c.customer_name,
    _P.c.customer_email,
    _P.c.customer_phone,
    _P.c.metadata.label("metadata_json"),
    _P.c.livemode,
    _T.c.trx_id,
    _B.c.base_url.label("brand_base_url"),
).select_from(_P.join(_B, _B.c.id == _P.c.brand_id).outerjoin(_T, _T.c.payment_id == _P.c.id))
# Built once, with bind parameters: a prepared statement skips rebuilding and re-keying it.
PAYMENT_VIEW_BY_PUBLIC_ID = PAYMENT_VIEW.where(
    _P.c.public_id == bindparam("public_id"),
    _P.c.brand_id == bindparam("brand_id"),
    _P.c.livemode == bindparam("livemode"),
)
# The same view of one payment by its payment_id, with its brand_id (and its livemode): read along
# with the API key that asks for it (accounts.api_keys.key_with, which joins on both), so that
# reading a payment back is one round trip.
PAYMENT_VIEW_FOR_KEY = (
    PAYMENT_VIEW.add_columns(_P.c.brand_id)
    .where(_P.c.public_id == bindparam("public_id"))
    .subquery("payment_view")
)
NEWEST_FIRST = (_P.c.created_at.desc(), _P.c.id.desc())
PAYMENT_VIEW_ID = _P.c.id  # for filters other domains add to a listing (payment links)


def get_payment(brand, public_id, livemode=True):
    """A payment of this brand and mode by its payment_id; NotFound for anything else, another
    brand's or the other mode's included.
    """
    payment = db.session.execute(
        db.select(Payment)
        .options(joinedload(Payment.transaction))
        .where(
            _P.c.public_id == str(public_id),
            _P.c.brand_id == brand.id,
            _P.c.livemode == bool(livemode),
        )
    ).scalar_one_or_none()
    if payment is None:
        raise not_found("payment")
    return payment


def get_payment_view(brand_id, public_id, livemode=True):
    """What the API shows of a payment of this brand and mode (a read-only row); NotFound for
    anything else."""
    params = {"public_id": str(public_id), "brand_id": brand_id, "livemode": bool(livemode)}
    row = db.session.connection().execute(PAYMENT_VIEW_BY_PUBLIC_ID, params).first()
    if row is None:
        raise not_found("payment")
    return row


def payment_filters(brand_id, filters, livemode=True):
    """WHERE clauses for a listing: the brand's payments of one mode, narrowed by status, reference
    and dates."""
    clauses = [_P.c.brand_id == brand_id, _P.c.livemode == bool(livemode)]
    if filters.get("status"):
        clauses.append(_P.c.status == filters["status"])
    if filters.get("reference"):
        clauses.append(_P.c.reference == filters["reference"])
    if filters.get("from"):
        clauses.append(_P.c.created_at >= filters["from"])
    if filters.get("to"):
        clauses.append(_P.c.created_at <= filters["to"])
    if "invoice_id" in filters:  # the front door resolved `invoice`; None matches nothing
        clauses.append(_P.c.invoice_id == (filters["invoice_id"] or -1))
    return clauses


def list_payments_query(brand, filters, livemode=True):
    """The brand's payments (ORM rows, for the panel), newest first, narrowed as `payment_filters`
    says.
    """
    clauses = payment_filters(brand.id, filters, livemode)
    return db.select(Payment).where(*clauses).order_by(*NEWEST_FIRST)


def list_payment_views_query(brand_id, filters, livemode=True):
    """The same listing as the API shows it: view rows, newest first."""
    clauses = payment_filters(brand_id, filters, livemode)
    return PAYMENT_VIEW.where(*clauses).order_by(*NEWEST_FIRST)


def transition(payment, from_states, to_state, **values):
    """Move a payment between states with a guarded UPDATE; False when another writer got there
    first.
    """
    return (
        write_status(
            PAYMENT,
            (Payment.id == payment.id,),
            from_states,
            to_state,
            updated_at=utcnow(),
            **values,
        )
        == 1
    )


def complete_payment(
    payment,
    provider=None,
    provider_trx_id=None,
    sender_number=None,
    from_states=OPEN_STATUSES,
    charged=None,
    claims=None,
):
    """The one place a payment becomes completed: guarded transition plus its transaction and
    trx_id.

    Runs in the caller's database transaction and commits it; raises INVALID_STATE when the
    payment is no longer open (another writer completed, cancelled or expired it first).
    `from_states` is widened only by sms/late_money.py complete_late_payment (money that came
    after a cancel or expiry; docs/payment-states.md). `charged`: the {fee, amount_paid} of the
    way it was paid, written by the same guarded UPDATE (a wallet trip's, wallets/__init__.py).
    `claims`: as complete_payments'.
    """
    (transaction,) = complete_payments(
        [(payment, provider, provider_trx_id, sender_number)], from_states, charged, claims
    )
    db.session.refresh(payment)
    return transaction


def same_claims(claims):
    """SQL: each payment still carries the claim it was judged by ({payment id: its claimed_at})."""
    return db.or_(
        *(db.and_(Payment.id == id_, Payment.claimed_at == at) for id_, at in claims.items())
    )


def complete_payments(completions, from_states=OPEN_STATUSES, charged=None, claims=None):
    """complete_payment for several payments at once (a phone's batch): one guarded UPDATE moves
    them all, each gets its transaction and its `payment.completed` event, then one
    payments_completed signal carries them all; one commit.

    `completions` holds (payment, provider, provider_trx_id, sender_number); None keeps the column.
    All or nothing: when any payment is no longer open, the caller's transaction is rolled back and
    INVALID_STATE raised. Returns the transactions, in order. `charged` ({fee, amount_paid}) is
    written with the completion of a single payment. `claims` ({payment id: claimed_at}, an SMS's
    verdict): the claim each completion was judged against, so a claim taken back and replaced
    meanwhile (sms/claims.py reopen_claim, a correction at checkout) is not completed with the old
    claim's money; on PostgreSQL the correction can commit while an SMS's bind is still in flight.
    """
    now = utcnow()
    ids = [payment.id for payment, *_ in completions]
    values = {"completed_at": now, **(charged or {})}
    if charged and len(ids) != 1:
        raise ValueError("charged is for one payment's completion")
    for index, column in enumerate(("provider", "provider_trx_id", "sender_number"), 1):
        given = {c[0].id: c[index] for c in completions if c[index] is not None}
        if len(given) == 1 == len(ids):
            values[column] = given[ids[0]]
        elif given:  # each payment its own value, one statement
            values[column] = db.case(given, value=Payment.id, else_=getattr(Payment, column))
    where = (Payment.id.in_(ids),) + ((same_claims(claims),) if claims else ())
    moved = write_status(PAYMENT, where, from_states, PAYMENT_COMPLETED, updated_at=now, **values)
    if moved != len(ids):
        db.session.rollback()
        raise invalid_state("Only a created or processing payment can be completed.")
    for name, value in (charged or {}).items():  # as written: the transaction and event read them
        set_committed_value(completions[0][0], name, value)
    transactions = [
        Transaction(
            trx_id=new_trx_id(),
            brand_id=payment.brand_id,
            payment_id=payment.id,
            amount=payment.amount,
            amount_refunded=0,
            fee=payment.fee if payment.currency == BDT else 0,  # refunds.py refundable
            currency=payment.currency,
            status=TRANSACTION_COMPLETED,
            provider=provider or payment.provider,
            provider_trx_id=provider_trx_id or payment.provider_trx_id,
            created_at=now,
        )
        for payment, provider, provider_trx_id, _ in completions
    ]
    db.session.add_all(transactions)
    try:
        db.session.flush()
    except IntegrityError:  # pragma: no cover - an 80-bit trx_id collision
        db.session.rollback()
        raise
    payments = [payment for payment, *_ in completions]
    emit_events(
        "payment.completed",
        [Emission(p.brand, payment=p, transaction=t) for p, t in zip(payments, transactions)],
    )
    payments_completed.send(list(zip(payments, transactions)))  # see connect_listeners
    commit_work()
    return transactions


def cancel_payment(payment, from_states=OPEN_STATUSES):
    """Cancel an open payment (customer at checkout, or the merchant through the API).

    The checkout narrows `from_states` to `created` until the customer confirms: a claim committing
    meanwhile then wins, and the customer who said "I have paid" is asked first.
    """
    if not transition(payment, from_states, PAYMENT_CANCELLED, cancelled_at=utcnow()):
        db.session.rollback()
        raise invalid_state(f"A {payment.status} payment cannot be cancelled.")
    # An SMS held for review on this payment goes back to `unmatched`, in the same transaction.
    payment_cancelled.send(payment)
    emit_event("payment.cancelled", payment.brand, payment=payment)
    payment_closed.send(payment)
    commit_work()
    db.session.refresh(payment)
    return payment


def expirable():
    """Open payments the sweep may expire: not one held for review, which waits for the merchant."""
    return db.and_(
        Payment.status.in_(OPEN_STATUSES),
        db.or_(Payment.status == PAYMENT_CREATED, not_held_for_review_sql()),
    )


def expire_due_payments(now=None):
    """Expire every open payment past its expires_at, except those held for review; returns those
    expired.

    A processing payment with a review reason holds its SMS (or learnt a rival paid its TrxID); only
    the merchant's approve or reject settles it, so the sweep leaves it alone. The guard is repeated
    in the UPDATE: a hold for review committing meanwhile wins over the sweep.
    """
    now = now or utcnow()
    with unit_of_work():
        due = (
            db.session.execute(
                db.select(Payment).where(expirable(), Payment.expires_at <= now).limit(500)
            )
            .scalars()
            .all()
        )
        return [p for p in due if expire_payment(p, (Payment.expires_at <= now,))]


def expire_payment(payment, guards=(), **values):
    """The one expiry transition: an open payment not held for review (and `guards`) → expired,
    with payment.expired through the outbox; False when it moved meanwhile. In the caller's
    transaction, uncommitted.

    The sweep expires what is due; test mode's "let it expire" (testmode/simulate.py) expires a test
    payment now, its expires_at brought forward in `values`.
    """
    moved = write_status(
        PAYMENT,
        (Payment.id == payment.id, expirable(), *guards),
        OPEN_STATUSES,
        PAYMENT_EXPIRED,
        updated_at=utcnow(),
        **values,
    )
    if moved != 1:
        return False
    emit_event("payment.expired", payment.brand, payment=payment)
    payment_closed.send(payment)
    return True


def fail_payment(payment, reason):
    """Reject a processing payment's claim (the merchant, in the panel): processing → failed."""
    if not transition(
        payment, (PAYMENT_PROCESSING,), PAYMENT_FAILED, review_reason=(reason or "")[:255] or None
    ):
        db.session.rollback()
        raise invalid_state(
            f"Only a processing payment can be failed; this one is {payment.status}."
        )
    emit_event("payment.failed", payment.brand, payment=payment)
    payment_closed.send(payment)
    commit_work()
    db.session.refresh(payment)
    return payment
