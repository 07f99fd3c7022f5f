"""An invoice (numbered per brand, for a customer), its line items, and each brand's numbering."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db
from ...states import INVOICE_DRAFT, INVOICE_OVERDUE, INVOICE_PAID, INVOICE_SENT, INVOICE_VOID

INVOICE_STATUSES = (INVOICE_DRAFT, INVOICE_SENT, INVOICE_OVERDUE, INVOICE_PAID, INVOICE_VOID)
OPEN_INVOICE_STATUSES = (INVOICE_SENT, INVOICE_OVERDUE)  # what a customer can pay
LANGUAGES = ("en", "bn")


class InvoiceSequence(db.Model):
    """Each brand's numbering: its prefix and the next number, taken under the row's lock; test
    invoices count apart (next_test_number), so that they leave no gap in the live numbers."""

    __tablename__ = "invoice_sequences"

    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), primary_key=True)
    prefix = db.Column(db.String(20), nullable=False, default="INV-")
    next_number = db.Column(db.Integer, nullable=False, default=1)
    next_test_number = db.Column(db.Integer, nullable=False, default=1, server_default="1")


class Invoice(db.Model):
    __tablename__ = "invoices"
    __table_args__ = (
        # A test invoice's number is stored negated (invoices/numbering.py): one rule for both.
        db.UniqueConstraint("brand_id", "number", name="uq_invoices_brand_number"),
        db.Index("ix_invoices_brand_created", "brand_id", "created_at"),
        db.Index("ix_invoices_status_due", "status", "due_date"),
        db.CheckConstraint("discount >= 0 AND total >= 0", name="invoice_amounts_not_negative"),
    )

    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(36), nullable=False, unique=True)
    # The customer's link /invoice/<token>: 192 random bits, never the id.
    token = db.Column(db.String(64), nullable=False, unique=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    # Live (True) or test (False), the mode of the key that made it; rows before test mode are live.
    livemode = db.Column(db.Boolean, nullable=False, default=True, server_default=db.true())
    customer_id = db.Column(db.Integer, db.ForeignKey("customers.id"), nullable=False)
    number = db.Column(db.Integer, nullable=False)
    # The number as printed (prefix + four digits), kept as issued when the prefix changes later.
    number_text = db.Column(db.String(40), nullable=False)
    status = db.Column(db.String(10), nullable=False, default=INVOICE_DRAFT)
    currency = db.Column(db.String(3), nullable=False)
    language = db.Column(db.String(2), nullable=False, default="en")
    subtotal = db.Column(Money, nullable=False, default=0)
    discount = db.Column(Money, nullable=False, default=0)
    vat_rate = db.Column(db.Numeric(5, 2), nullable=False, default=0)
    vat_amount = db.Column(Money, nullable=False, default=0)
    total = db.Column(Money, nullable=False, default=0)
    notes = db.Column(db.Text)
    due_date = db.Column(db.Date)
    reminder_count = db.Column(db.Integer, nullable=False, default=0)
    last_reminder_at = db.Column(UTCDateTime)
    sent_at = db.Column(UTCDateTime)
    overdue_at = db.Column(UTCDateTime)
    paid_at = db.Column(UTCDateTime)
    voided_at = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    brand = db.relationship("Brand")
    customer = db.relationship("Customer")
    items = db.relationship(
        "InvoiceItem",
        order_by="InvoiceItem.position",
        cascade="all, delete-orphan",
        back_populates="invoice",
    )


class InvoiceItem(db.Model):
    __tablename__ = "invoice_items"

    id = db.Column(db.Integer, primary_key=True)
    invoice_id = db.Column(
        db.Integer, db.ForeignKey("invoices.id", ondelete="CASCADE"), nullable=False, index=True
    )
    position = db.Column(db.Integer, nullable=False)
    description = db.Column(db.String(500), nullable=False)
    quantity = db.Column(db.Numeric(12, 3), nullable=False)
    unit_price = db.Column(Money, nullable=False)
    amount = db.Column(Money, nullable=False)

    invoice = db.relationship("Invoice", back_populates="items")
