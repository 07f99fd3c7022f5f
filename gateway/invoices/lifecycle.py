"""An invoice's states: sent, paid (when its payment completes), void; overdue in overdue.py."""

import logging

from flask import current_app

from ..answer_commit import commit_work, unit_of_work
from ..clock import isoformat, utcnow
from ..domain_errors import invalid_state
from ..extensions import db
from ..money import format_amount
from ..payments.lifecycle import cancel_payment, create_payment
from ..payments.models.payment import OPEN_STATUSES, PAID_STATUSES, Payment
from ..states import (
    INVOICE,
    INVOICE_DRAFT,
    INVOICE_OVERDUE,
    INVOICE_PAID,
    INVOICE_SENT,
    INVOICE_VOID,
    write_status,
)
from ..webhooks.events import emit_event
from .models.invoice import OPEN_INVOICE_STATUSES, Invoice

log = logging.getLogger(__name__)


def invoice_url(invoice):
    """The customer's page of the invoice: the brand's origin + /invoice/<token>."""
    base = invoice.brand.base_url or current_app.config["BASE_URL"]
    return f"{base.rstrip('/')}/invoice/{invoice.token}"


def move(invoice, from_states, to_state, **values):
    """One guarded UPDATE of the invoice's status; True when this writer won."""
    now = utcnow()
    moved = write_status(
        INVOICE, (Invoice.id == invoice.id,), from_states, to_state, updated_at=now, **values
    )
    return moved == 1


def mark_sent(invoice):
    """A draft becomes sent (sending a sent or overdue invoice again keeps its status)."""
    if move(invoice, (INVOICE_DRAFT,), INVOICE_SENT, sent_at=utcnow()):
        db.session.refresh(invoice)
        return invoice
    db.session.refresh(invoice)
    if invoice.status not in OPEN_INVOICE_STATUSES:
        raise invalid_state(f"A {invoice.status} invoice cannot be sent.")
    return invoice


def void_invoice(invoice):
    """Void an unpaid invoice: its link then says so and takes no payment.

    A payment the customer opened for it is cancelled in the same transaction, so that a checkout
    left open cannot pay a void invoice (money that still arrives is held as late money).
    """
    with unit_of_work():
        voidable = (INVOICE_DRAFT, INVOICE_SENT, INVOICE_OVERDUE)
        if not move(invoice, voidable, INVOICE_VOID, voided_at=utcnow()):
            db.session.rollback()
            db.session.refresh(invoice)
            raise invalid_state(f"A {invoice.status} invoice cannot be voided.")
        for payment in db.session.execute(
            db.select(Payment).where(
                Payment.invoice_id == invoice.id, Payment.status.in_(OPEN_STATUSES)
            )
        ).scalars():
            cancel_payment(payment)
    db.session.refresh(invoice)
    return invoice


def paying_payment(invoice):
    """The completed payment that paid the invoice, or None."""
    return db.session.execute(
        db.select(Payment)
        .where(Payment.invoice_id == invoice.id, Payment.status.in_(PAID_STATUSES))
        .order_by(Payment.completed_at)
        .limit(1)
    ).scalar_one_or_none()


def open_payment(invoice):
    """A payment for the invoice the customer can still finish, so a second click reuses it."""
    return db.session.execute(
        db.select(Payment)
        .where(
            Payment.invoice_id == invoice.id,
            Payment.status.in_(OPEN_STATUSES),
            Payment.expires_at > utcnow(),
        )
        .order_by(Payment.created_at.desc())
        .limit(1)
    ).scalar_one_or_none()


def hold_payable(invoice):
    """Lock the invoice's row while it is payable, by a guarded UPDATE that keeps its status; True
    when it is sent or overdue.

    Held until the caller commits (PostgreSQL's row lock, SQLite's write lock): a void, or a
    second Pay, waits for the payment made meanwhile and then sees it.
    """
    where = (Invoice.id == invoice.id,)
    return any(
        write_status(INVOICE, where, (status,), status) == 1 for status in OPEN_INVOICE_STATUSES
    )


def pay_invoice(invoice):
    """The payment the customer pays the invoice with: a live one, or a new one for the total.

    The invoice is held payable (hold_payable) from the check to the payment's commit: a void that
    commits first is refused here, one that comes after cancels this payment, and of two Pay
    clicks the second reuses the first's payment.
    """
    if not hold_payable(invoice):
        db.session.rollback()
        db.session.refresh(invoice)
        raise invalid_state(f"A {invoice.status} invoice cannot be paid.")
    payment = open_payment(invoice)
    if payment is not None:
        commit_work(keep_loaded=True)  # ends the hold
        return payment
    customer = invoice.customer
    # create_payment's commit ends the hold.
    return create_payment(
        invoice.brand,
        {
            "amount": invoice.total,
            "currency": invoice.currency,
            "reference": invoice.number_text,
            "customer_name": customer.name,
            "customer_mail": customer.email,
            "customer_phone": customer.phone,
            "redirect_url": invoice_url(invoice),
            "cancel_url": invoice_url(invoice),
            "metadata": {"invoice_id": invoice.public_id, "invoice_number": invoice.number_text},
            "invoice_id": invoice.id,
        },
        livemode=invoice.livemode,  # a test invoice is paid by a test payment
    )


def invoice_event_data(invoice, payment=None, transaction=None):
    """`data` of the invoice.* events."""
    customer = invoice.customer
    return {
        "invoice_id": invoice.public_id,
        "number": invoice.number_text,
        "status": invoice.status,
        "total": format_amount(invoice.total),
        "currency": invoice.currency,
        "due_date": invoice.due_date.isoformat() if invoice.due_date else None,
        "paid_at": isoformat(invoice.paid_at) if invoice.paid_at else None,
        "customer": {"name": customer.name, "email": customer.email, "phone": customer.phone},
        "payment_id": payment.public_id if payment is not None else None,
        "trx_id": transaction.trx_id if transaction is not None else None,
        "provider_trx_id": transaction.provider_trx_id if transaction is not None else None,
    }


def mark_invoices_paid(completions):
    """Listener of payments_completed: the invoice of each payment that has one becomes paid (the
    payment row says which: no query for the others).
    """
    for payment, transaction in completions:
        mark_invoice_paid(payment, transaction)


def mark_invoice_paid(payment, transaction=None):
    """In the completing transaction: the payment's invoice becomes paid and invoice.paid is
    written.
    """
    if payment.invoice_id is None:
        return
    invoice = db.session.get(Invoice, payment.invoice_id)
    if not move(invoice, OPEN_INVOICE_STATUSES, INVOICE_PAID, paid_at=utcnow()):
        # Paid twice, or voided meanwhile: the payment stands and the merchant sees both.
        log.warning(
            "invoice %s: payment %s completed, invoice is %s",
            invoice.id,
            payment.id,
            invoice.status,
        )
        return
    db.session.refresh(invoice)
    emit_event(
        "invoice.paid",
        invoice.brand,
        payment=payment,
        transaction=transaction,
        data=invoice_event_data(invoice, payment, transaction),
    )
