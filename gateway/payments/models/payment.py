"""A payment from creation to completion, and the transaction a completed payment owns."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db
from ...states import (
    PAYMENT_CANCELLED,
    PAYMENT_COMPLETED,
    PAYMENT_CREATED,
    PAYMENT_EXPIRED,
    PAYMENT_FAILED,
    PAYMENT_PARTIALLY_REFUNDED,
    PAYMENT_PROCESSING,
    PAYMENT_REFUNDED,
    REFUND_COMPLETED,
    TRANSACTION_COMPLETED,
)

PAYMENT_STATUSES = (
    PAYMENT_CREATED,
    PAYMENT_PROCESSING,
    PAYMENT_COMPLETED,
    PAYMENT_PARTIALLY_REFUNDED,
    PAYMENT_REFUNDED,
    PAYMENT_CANCELLED,
    PAYMENT_EXPIRED,
    PAYMENT_FAILED,
)

OPEN_STATUSES = (PAYMENT_CREATED, PAYMENT_PROCESSING)
PAID_STATUSES = (PAYMENT_COMPLETED, PAYMENT_PARTIALLY_REFUNDED, PAYMENT_REFUNDED)


class Payment(db.Model):
    __tablename__ = "payments"
    __table_args__ = (
        db.Index("ix_payments_brand_created", "brand_id", "created_at"),
        db.Index("ix_payments_brand_status_created", "brand_id", "status", "created_at"),
        db.Index("ix_payments_brand_reference", "brand_id", "reference"),
        db.Index("ix_payments_status_expires", "status", "expires_at"),
        db.Index("ix_payments_customer", "customer_id"),
        # Both are empty while a payment is open, and a lookup always names a value: partial
        # indexes leave them out, one page fewer each in every create's commit.
        db.Index(
            "ix_payments_provider_trx",
            "provider",
            "provider_trx_id",
            sqlite_where=db.text("provider_trx_id IS NOT NULL"),
            postgresql_where=db.text("provider_trx_id IS NOT NULL"),
        ),
        db.Index(
            "ix_payments_invoice_id",
            "invoice_id",
            sqlite_where=db.text("invoice_id IS NOT NULL"),
            postgresql_where=db.text("invoice_id IS NOT NULL"),
        ),
        db.CheckConstraint("amount > 0", name="amount_positive"),
        db.CheckConstraint(
            # A BDT payment's refunds may return its fee too (taka); another currency's, only its
            # amount (the fee is in taka): gateway/payments/refunds.py refundable.
            "amount_refunded >= 0 AND amount_refunded <= "
            "amount + CASE WHEN currency = 'BDT' THEN fee ELSE 0 END",
            name="refund_within_amount",
        ),
    )

    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(36), nullable=False, unique=True)
    token = db.Column(db.String(64), nullable=False, unique=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    # Live (True) or test (False), the mode of the key that made it; rows before test mode are live.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    customer_id = db.Column(db.Integer, db.ForeignKey("customers.id", ondelete="SET NULL"))
    reference = db.Column(db.String(255))
    # What the merchant asked, in `currency` (gateway/payments/amounts.py: the rest follow from it).
    amount = db.Column(Money, nullable=False)
    amount_refunded = db.Column(Money, nullable=False, default=0)
    currency = db.Column(db.String(3), nullable=False)
    # The amount in taka at `exchange_rate` (taka per unit, fixed at creation; None for BDT), the
    # chosen method's fee in taka, and the total the customer sends: amount_bdt + fee. Both taka
    # amounts are None for a currency the brand has no rate for (no SMS can pay it).
    amount_bdt = db.Column(Money)
    exchange_rate = db.Column(db.Numeric(18, 6))
    fee = db.Column(Money, nullable=False, default=0, server_default=db.text("0"))
    amount_paid = db.Column(Money)
    status = db.Column(db.String(20), nullable=False, default=PAYMENT_CREATED)
    callback_url = db.Column(db.String(2048))
    redirect_url = db.Column(db.String(2048))
    cancel_url = db.Column(db.String(2048))
    customer_name = db.Column(db.String(200))
    customer_email = db.Column(db.String(254))
    customer_phone = db.Column(db.String(20))
    metadata_json = db.Column("metadata", db.JSON)
    provider = db.Column(db.String(20))
    provider_trx_id = db.Column(db.String(64))
    sender_number = db.Column(db.String(20))
    review_reason = db.Column(db.String(255))
    # The invoice this payment pays (gateway/invoices): completing the payment marks it paid.
    invoice_id = db.Column(db.Integer, db.ForeignKey("invoices.id"))
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)
    expires_at = db.Column(UTCDateTime, nullable=False)
    claimed_at = db.Column(UTCDateTime)
    completed_at = db.Column(UTCDateTime)
    cancelled_at = db.Column(UTCDateTime)

    brand = db.relationship("Brand")
    customer = db.relationship("Customer")
    transaction = db.relationship("Transaction", back_populates="payment", uselist=False)

    # The two values the API's payment view reads by join (payments.lifecycle.PAYMENT_VIEW), under
    # the same names, so that one schema renders a Payment and a view row alike.
    @property
    def trx_id(self):
        """The service's transaction reference, once completed."""
        return self.transaction.trx_id if self.transaction is not None else None

    @property
    def brand_base_url(self):
        """The brand's own origin for checkout links, if it has one."""
        return self.brand.base_url if self.brand is not None else None


class Transaction(db.Model):
    __tablename__ = "transactions"
    __table_args__ = (
        db.Index("ix_transactions_brand_created", "brand_id", "created_at"),
        db.CheckConstraint(
            "amount_refunded >= 0 AND amount_refunded <= amount + fee", name="refund_within_amount"
        ),
    )

    id = db.Column(db.Integer, primary_key=True)
    trx_id = db.Column(db.String(20), nullable=False, unique=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    payment_id = db.Column(db.Integer, db.ForeignKey("payments.id"), nullable=False, unique=True)
    amount = db.Column(Money, nullable=False)
    amount_refunded = db.Column(Money, nullable=False, default=0)
    # The method's fee the customer paid on top of `amount` (a BDT payment's fee, recorded at
    # completion; 0 otherwise): a refund may return it where the brand says so (refunds.py).
    fee = db.Column(Money, nullable=False, default=0, server_default=db.text("0"))
    currency = db.Column(db.String(3), nullable=False)
    status = db.Column(db.String(20), nullable=False, default=TRANSACTION_COMPLETED)
    provider = db.Column(db.String(20))
    provider_trx_id = db.Column(db.String(64))
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    payment = db.relationship("Payment", back_populates="transaction")

    @property
    def livemode(self):
        """A transaction is of its payment's mode (live or test)."""
        return self.payment.livemode


class Refund(db.Model):
    __tablename__ = "refunds"
    __table_args__ = (
        db.Index("ix_refunds_brand_created", "brand_id", "created_at"),
        db.Index("ix_refunds_transaction", "transaction_id"),
        db.CheckConstraint("amount > 0", name="amount_positive"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    # Live (True) or test (False), the mode of the key that made it; rows before test mode are live.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    transaction_id = db.Column(db.Integer, db.ForeignKey("transactions.id"), nullable=False)
    amount = db.Column(Money, nullable=False)
    reason = db.Column(db.String(500))
    status = db.Column(db.String(20), nullable=False, default=REFUND_COMPLETED)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    # The panel user who recorded it (None: through the API or a plugin); staff limits count it.
    refunded_by_id = db.Column(db.Integer, db.ForeignKey("users.id", ondelete="SET NULL"))
    # The wallet's own id of the refund, when its API made it (gateway/wallets/).
    provider_refund_id = db.Column(db.String(100))

    transaction = db.relationship("Transaction")
