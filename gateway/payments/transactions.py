"""Transactions: the record a completed payment owns, listed and read by trx_id."""

from ..domain_errors import not_found
from ..extensions import db
from .models.payment import Payment, Transaction

MAX_TRX_ID_LENGTH = 20


def of_mode(query, livemode):
    """The query narrowed to transactions whose payment is of this mode (live or test)."""
    return query.join(Payment, Payment.id == Transaction.payment_id).where(
        Payment.livemode == bool(livemode)
    )


def list_transactions_query(brand, filters, livemode=True):
    """The brand's transactions of one mode, newest first, narrowed by status, provider and
    dates."""
    query = of_mode(db.select(Transaction).where(Transaction.brand_id == brand.id), livemode)
    if filters.get("status"):
        query = query.where(Transaction.status == filters["status"])
    if filters.get("provider"):
        query = query.where(Transaction.provider == filters["provider"].lower())
    if filters.get("from"):
        query = query.where(Transaction.created_at >= filters["from"])
    if filters.get("to"):
        query = query.where(Transaction.created_at <= filters["to"])
    return query.options(db.selectinload(Transaction.payment)).order_by(
        Transaction.created_at.desc(), Transaction.id.desc()
    )


def get_transaction(brand, trx_id, livemode=True):
    """A transaction of this brand and mode by trx_id; NotFound for anything else, another brand's
    or the other mode's included."""
    trx_id = str(trx_id).strip().upper()  # trx_ids are issued upper-case; accept any case back
    transaction = None
    if 0 < len(trx_id) <= MAX_TRX_ID_LENGTH:
        query = db.select(Transaction).where(
            Transaction.trx_id == trx_id, Transaction.brand_id == brand.id
        )
        transaction = db.session.execute(of_mode(query, livemode)).scalar_one_or_none()
    if transaction is None:
        raise not_found("transaction")
    return transaction
