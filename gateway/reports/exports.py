"""CSV exports: one header and one row generator per kind, streamed in the brand's time zone.

Rows are read with `yield_per` (a server-side cursor on PostgreSQL) and written a batch of lines at
a time, so an export of any size never sits in memory. Each kind (payments, refunds, invoices) is
one entry of EXPORTS: a header and a function giving rows for a brand, a UTC range and a mode (live
or test: never both in one file).
"""

import csv
import io
from datetime import datetime, time, timedelta, timezone

from ..extensions import db
from ..invoices.models.invoice import Invoice
from ..links.models.link import LinkPayment, PaymentLink
from ..money import format_amount, plain_decimal
from ..payments.dashboard import brand_zone
from ..payments.models.customer import Customer
from ..payments.models.payment import Payment, Refund, Transaction

BATCH = 500
# Cells a spreadsheet would run as a formula (OWASP "CSV injection"): such a cell gets a leading
# quote.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


class ExportKind:
    """A kind of export: its columns and the rows of one brand and mode between two UTC
    instants."""

    def __init__(self, name, header, rows):
        self.name, self.header, self.rows = name, header, rows


def safe_cell(value):
    """A cell as text; one starting with = + - @ (or a tab or CR) is prefixed with ' so it stays
    text.
    """
    if value is None:
        return ""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def local_iso(moment, zone):
    """A UTC instant as ISO 8601 in the brand's zone, with its offset
    (2025-01-02T06:30:00+06:00)."""
    if moment is None:
        return None
    return moment.astimezone(zone).replace(microsecond=0).isoformat()


def day_range(brand, day_from=None, day_to=None):
    """Local calendar days (inclusive) as a UTC [start, end) pair; either may be None (open)."""
    zone = brand_zone(brand)
    start = (
        datetime.combine(day_from, time.min, tzinfo=zone).astimezone(timezone.utc)
        if day_from
        else None
    )
    end = (
        datetime.combine(day_to + timedelta(days=1), time.min, tzinfo=zone).astimezone(timezone.utc)
        if day_to
        else None
    )
    return start, end


def within(column, start, end):
    """WHERE clauses for start <= column < end."""
    clauses = []
    if start is not None:
        clauses.append(column >= start)
    if end is not None:
        clauses.append(column < end)
    return clauses


def streamed(query):
    """Rows of a select, fetched BATCH at a time (a server-side cursor where the engine has one)."""
    return db.session.execute(query.execution_options(yield_per=BATCH))


PAYMENT_HEADER = [
    "payment_id",
    "created_at",
    "completed_at",
    "status",
    "reference",
    "amount",
    "amount_refunded",
    "currency",
    "provider",
    "provider_trx_id",
    "trx_id",
    "customer_name",
    "customer_email",
    "customer_phone",
    "payment_link",
    # Appended, so that columns read by position keep their place: in taka (payments/amounts.py).
    "fee",
    "amount_paid",
    "amount_bdt",
    "exchange_rate",
]


def payment_rows(brand, start, end, livemode=True):
    """The brand's payments of one mode created in [start, end), oldest first."""
    zone = brand_zone(brand)
    query = (
        db.select(
            Payment.public_id,
            Payment.created_at,
            Payment.completed_at,
            Payment.status,
            Payment.reference,
            Payment.amount,
            Payment.amount_refunded,
            Payment.currency,
            Payment.provider,
            Payment.provider_trx_id,
            Transaction.trx_id,
            Payment.customer_name,
            Payment.customer_email,
            Payment.customer_phone,
            PaymentLink.slug,
            Payment.fee,
            Payment.amount_paid,
            Payment.amount_bdt,
            Payment.exchange_rate,
        )
        .outerjoin(Transaction, Transaction.payment_id == Payment.id)
        .outerjoin(LinkPayment, LinkPayment.payment_id == Payment.id)
        .outerjoin(PaymentLink, PaymentLink.id == LinkPayment.link_id)
        .where(
            Payment.brand_id == brand.id,
            Payment.livemode == bool(livemode),
            *within(Payment.created_at, start, end),
        )
        .order_by(Payment.created_at, Payment.id)
    )
    for row in streamed(query):
        yield [
            row.public_id,
            local_iso(row.created_at, zone),
            local_iso(row.completed_at, zone),
            row.status,
            row.reference,
            format_amount(row.amount),
            format_amount(row.amount_refunded),
            row.currency,
            row.provider,
            row.provider_trx_id,
            row.trx_id,
            row.customer_name,
            row.customer_email,
            row.customer_phone,
            row.slug,
            format_amount(row.fee),
            format_amount(row.amount_paid),
            format_amount(row.amount_bdt),
            plain_decimal(row.exchange_rate),
        ]


REFUND_HEADER = [
    "refund_id",
    "created_at",
    "trx_id",
    "payment_id",
    "reference",
    "amount",
    "currency",
    "reason",
    "status",
]


def refund_rows(brand, start, end, livemode=True):
    """The brand's refunds of one mode made in [start, end), oldest first."""
    zone = brand_zone(brand)
    query = (
        db.select(
            Refund.id,
            Refund.created_at,
            Transaction.trx_id,
            Payment.public_id,
            Payment.reference,
            Refund.amount,
            Transaction.currency,
            Refund.reason,
            Refund.status,
        )
        .join(Transaction, Transaction.id == Refund.transaction_id)
        .join(Payment, Payment.id == Transaction.payment_id)
        .where(
            Refund.brand_id == brand.id,
            Refund.livemode == bool(livemode),
            *within(Refund.created_at, start, end),
        )
        .order_by(Refund.created_at, Refund.id)
    )
    for row in streamed(query):
        yield [
            row.id,
            local_iso(row.created_at, zone),
            row.trx_id,
            row.public_id,
            row.reference,
            format_amount(row.amount),
            row.currency,
            row.reason,
            row.status,
        ]


INVOICE_HEADER = [
    "invoice_id",
    "number",
    "created_at",
    "due_date",
    "status",
    "customer_name",
    "customer_email",
    "customer_phone",
    "currency",
    "subtotal",
    "discount",
    "vat_rate",
    "vat_amount",
    "total",
    "sent_at",
    "paid_at",
    "voided_at",
]


def invoice_rows(brand, start, end, livemode=True):
    """The brand's invoices of one mode written in [start, end), oldest first, drafts included."""
    zone = brand_zone(brand)
    query = (
        db.select(
            Invoice.public_id,
            Invoice.number_text,
            Invoice.created_at,
            Invoice.due_date,
            Invoice.status,
            Customer.name,
            Customer.email,
            Customer.phone,
            Invoice.currency,
            Invoice.subtotal,
            Invoice.discount,
            Invoice.vat_rate,
            Invoice.vat_amount,
            Invoice.total,
            Invoice.sent_at,
            Invoice.paid_at,
            Invoice.voided_at,
        )
        .join(Customer, Customer.id == Invoice.customer_id)
        .where(
            Invoice.brand_id == brand.id,
            Invoice.livemode == bool(livemode),
            *within(Invoice.created_at, start, end),
        )
        .order_by(Invoice.created_at, Invoice.id)
    )
    for row in streamed(query):
        yield [
            row.public_id,
            row.number_text,
            local_iso(row.created_at, zone),
            row.due_date.isoformat() if row.due_date else None,
            row.status,
            row.name,
            row.email,
            row.phone,
            row.currency,
            format_amount(row.subtotal),
            format_amount(row.discount),
            f"{row.vat_rate:.2f}",
            format_amount(row.vat_amount),
            format_amount(row.total),
            local_iso(row.sent_at, zone),
            local_iso(row.paid_at, zone),
            local_iso(row.voided_at, zone),
        ]


# Every kind of export by its file name.
EXPORTS = {
    "payments": ExportKind("payments", PAYMENT_HEADER, payment_rows),
    "refunds": ExportKind("refunds", REFUND_HEADER, refund_rows),
    "invoices": ExportKind("invoices", INVOICE_HEADER, invoice_rows),
}


def csv_chunks(kind, brand, day_from=None, day_to=None, livemode=True):
    """The export as CSV text, a batch of lines per chunk: header first, then each row (of the live
    objects, or of the test ones with `livemode=False`)."""
    start, end = day_range(brand, day_from, day_to)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(kind.header)
    count = 0
    for row in kind.rows(brand, start, end, livemode):
        writer.writerow([safe_cell(value) for value in row])
        count += 1
        if count % BATCH == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def file_name(kind, brand, day_from=None, day_to=None):
    """The download's name, e.g. test-shop-payments-2025-01-01-to-2025-01-31.csv."""
    span = "-".join(part for part in (str(day_from or "start"), "to", str(day_to or "now")) if part)
    return f"{brand.slug}-{kind.name}-{span}.csv"
