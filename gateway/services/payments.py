"""Payments: created by the merchant, completed once, cancelled or expired while open."""
import base64
import secrets
import uuid
from datetime import timedelta

from flask import current_app
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import joinedload

from ..clock import utcnow
from ..errors import field_error, invalid_state, not_found
from ..extensions import commit_without_expiring, db
from ..models import OPEN_STATUSES, Payment, Transaction
from .callback_urls import check_callback_url
from .customers import upsert_customer
from .events import emit_event
from .outbound_sms import queue_receipt_sms


def new_trx_id():
    """The service's own transaction reference: TRX + 12 upper-case base32 characters."""
    return "TRX" + base64.b32encode(secrets.token_bytes(10)).decode()[:12]


def checkout_url(payment):
    """Where the merchant sends the customer: the brand's origin + /checkout/<token>."""
    base = (payment.brand.base_url if payment.brand and payment.brand.base_url else current_app.config["BASE_URL"])
    return f"{base.rstrip('/')}/checkout/{payment.token}"


def payment_ttl(brand):
    """How long a payment stays open: the brand's own setting, else PAYMENT_TTL."""
    return timedelta(seconds=brand.payment_ttl or current_app.config["PAYMENT_TTL"])


def create_payment(brand, data):
    """Record a payment intent in `created` and upsert its customer."""
    currency = data["currency"]
    if currency not in brand.currency_list:
        raise field_error("currency", f"Currency must be one of {', '.join(brand.currency_list)}.")
    check_callback_url(data.get("callback_url"))
    customer = upsert_customer(brand, data.get("customer_name"), data.get("customer_mail"), data.get("customer_phone"))
    now = utcnow()
    payment = Payment(
        public_id=str(uuid.uuid4()), token=secrets.token_urlsafe(24), brand_id=brand.id, brand=brand,
        customer=customer, reference=data.get("reference"), amount=data["amount"], amount_refunded=0,
        currency=currency, status="created", callback_url=data.get("callback_url"),
        redirect_url=data.get("redirect_url"), cancel_url=data.get("cancel_url"),
        customer_name=data.get("customer_name"), customer_email=data.get("customer_mail"),
        customer_phone=data.get("customer_phone"), metadata_json=data.get("metadata"),
        created_at=now, updated_at=now, expires_at=now + payment_ttl(brand),
    )
    db.session.add(payment)
    commit_without_expiring()
    return payment


# Built once: the merchant's read-back after every webhook runs it.
PAYMENT_BY_PUBLIC_ID = (
    db.select(Payment).options(joinedload(Payment.transaction))
    .where(Payment.public_id == db.bindparam("public_id"), Payment.brand_id == db.bindparam("brand_id"))
)


def get_payment(brand, public_id):
    """A payment of this brand by its payment_id; 404 for anything else, another brand's included."""
    payment = db.session.execute(
        PAYMENT_BY_PUBLIC_ID, {"public_id": str(public_id), "brand_id": brand.id}
    ).scalar_one_or_none()
    if payment is None:
        raise not_found("payment")
    return payment


def list_payments_query(brand, filters):
    """The brand's payments, newest first, narrowed by status, reference and dates."""
    query = db.select(Payment).where(Payment.brand_id == brand.id)
    if filters.get("status"):
        query = query.where(Payment.status == filters["status"])
    if filters.get("reference"):
        query = query.where(Payment.reference == filters["reference"])
    if filters.get("from"):
        query = query.where(Payment.created_at >= filters["from"])
    if filters.get("to"):
        query = query.where(Payment.created_at <= filters["to"])
    return query.order_by(Payment.created_at.desc(), Payment.id.desc())


def transition(payment, from_states, to_state, **values):
    """Move a payment between states with a guarded UPDATE; False when another writer got there first."""
    now = utcnow()
    changed = db.session.execute(
        db.update(Payment)
        .where(Payment.id == payment.id, Payment.status.in_(from_states))
        .values(status=to_state, updated_at=now, **values)
        .execution_options(synchronize_session=False)
    ).rowcount
    return changed == 1


def complete_payment(payment, provider=None, provider_trx_id=None, sender_number=None):
    """The one place a payment becomes completed: guarded transition plus its transaction and trx_id.

    Runs in the caller's database transaction and commits it; raises INVALID_STATE when the
    payment is no longer open (another writer completed, cancelled or expired it first).
    """
    now = utcnow()
    values = {"completed_at": now}
    if provider is not None:
        values["provider"] = provider
    if provider_trx_id is not None:
        values["provider_trx_id"] = provider_trx_id
    if sender_number is not None:
        values["sender_number"] = sender_number
    if not transition(payment, OPEN_STATUSES, "completed", **values):
        db.session.rollback()
        raise invalid_state("Only a created or processing payment can be completed.")
    transaction = Transaction(
        trx_id=new_trx_id(), brand_id=payment.brand_id, payment_id=payment.id, amount=payment.amount,
        amount_refunded=0, currency=payment.currency, status="completed",
        provider=provider or payment.provider, provider_trx_id=provider_trx_id or payment.provider_trx_id,
        created_at=now,
    )
    db.session.add(transaction)
    try:
        db.session.flush()
    except IntegrityError:  # pragma: no cover - an 80-bit trx_id collision
        db.session.rollback()
        raise
    emit_event("payment.completed", payment.brand, payment=payment, transaction=transaction)
    queue_receipt_sms(payment, transaction)
    db.session.commit()
    db.session.refresh(payment)
    return transaction


def cancel_payment(payment):
    """Cancel an open payment (customer at checkout, or the merchant through the API)."""
    from .matching import release_held_sms  # matching imports this module

    if not transition(payment, OPEN_STATUSES, "cancelled", cancelled_at=utcnow()):
        db.session.rollback()
        raise invalid_state(f"A {payment.status} payment cannot be cancelled.")
    # An SMS held for review on this payment goes back to `unmatched`, in the same transaction.
    release_held_sms(payment)
    emit_event("payment.cancelled", payment.brand, payment=payment)
    db.session.commit()
    db.session.refresh(payment)
    return payment


def expirable():
    """Open payments the sweep may expire: not one held for review, which waits for the merchant."""
    return db.and_(Payment.status.in_(OPEN_STATUSES),
                   db.or_(Payment.status == "created", Payment.review_reason.is_(None)))


def expire_due_payments(now=None):
    """Expire every open payment past its expires_at, except those held for review; returns those expired.

    A processing payment with a review reason holds its SMS (or learnt a rival paid its TrxID); only the
    merchant's approve or reject settles it, so the sweep leaves it alone. The guard is repeated
    in the UPDATE: a hold for review committing meanwhile wins over the sweep.
    """
    now = now or utcnow()
    due = db.session.execute(
        db.select(Payment).where(expirable(), Payment.expires_at <= now).limit(500)
    ).scalars().all()
    expired = []
    for payment in due:
        changed = db.session.execute(
            db.update(Payment).where(Payment.id == payment.id, expirable(), Payment.expires_at <= now)
            .values(status="expired", updated_at=utcnow()).execution_options(synchronize_session=False)
        ).rowcount
        if changed == 1:
            emit_event("payment.expired", payment.brand, payment=payment)
            expired.append(payment)
    db.session.commit()
    return expired


def fail_payment(payment, reason):
    """Reject a processing payment's claim (the merchant, in the panel): processing → failed."""
    if not transition(payment, ("processing",), "failed", review_reason=(reason or "")[:255] or None):
        db.session.rollback()
        raise invalid_state(f"Only a processing payment can be failed; this one is {payment.status}.")
    emit_event("payment.failed", payment.brand, payment=payment)
    db.session.commit()
    db.session.refresh(payment)
    return payment
