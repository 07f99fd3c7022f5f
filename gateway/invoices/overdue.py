"""Overdue invoices: sent ones past their due date (in the brand's zone) become overdue, with one
reminder."""

import logging
from datetime import timezone
from zoneinfo import ZoneInfo

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import DomainError
from ..extensions import db
from ..states import INVOICE, INVOICE_OVERDUE, INVOICE_SENT, write_status
from ..webhooks.events import emit_event
from .lifecycle import invoice_event_data, move
from .models.invoice import OPEN_INVOICE_STATUSES, Invoice
from .sending import send_reminder

log = logging.getLogger(__name__)


def local_today(brand, now):
    """The brand's calendar date at `now` (UTC)."""
    try:
        zone = ZoneInfo(brand.timezone or "Asia/Dhaka")
    except (KeyError, ValueError):
        zone = ZoneInfo("UTC")
    return (now if now.tzinfo else now.replace(tzinfo=timezone.utc)).astimezone(zone).date()


def sweep_overdue_invoices(now=None):
    """Sent invoices past their due date (in the brand's zone) become overdue, with one reminder.

    Each step is a guarded UPDATE: a repeated or concurrent sweep finds nothing left to move, and
    only the sweep that moves `reminder_count` from 0 to 1 sends the reminder. An invoice whose
    unit a domain rule refuses is rolled back alone and left for the next sweep: the invoices
    after it still move. Returns how many invoices became overdue.
    """
    now = now or utcnow()
    moved = 0
    for invoice in due_candidates(now):
        if invoice.due_date >= local_today(invoice.brand, now):
            continue
        invoice_id = invoice.id
        try:
            moved += mark_overdue(invoice, now)
        except DomainError as error:
            log.warning("invoice %s left for the next sweep: %s", invoice_id, error.code)
    return moved


def mark_overdue(invoice, now):
    """One invoice's move to overdue, its event and its one reminder, committed together (rolled
    back together on an error); 1 when this call moved it, else 0."""
    moved = 0
    with unit_of_work():
        if invoice.status == INVOICE_SENT and move(
            invoice, (INVOICE_SENT,), INVOICE_OVERDUE, overdue_at=now
        ):
            db.session.refresh(invoice)
            emit_event(
                "invoice.overdue",
                invoice.brand,
                data=invoice_event_data(invoice),
                livemode=invoice.livemode,
            )
            moved = 1
        reminded = write_status(
            INVOICE,
            (Invoice.id == invoice.id, Invoice.reminder_count == 0),
            (INVOICE_OVERDUE,),
            INVOICE_OVERDUE,
            reminder_count=1,
            last_reminder_at=now,
            updated_at=now,
        )
        if reminded == 1:
            db.session.refresh(invoice)
            send_reminder(invoice)
    return moved


def due_candidates(now):
    """Unpaid sent invoices whose due date may have passed somewhere (a day of margin for zones)."""
    return (
        db.session.execute(
            db.select(Invoice)
            .where(
                Invoice.status.in_(OPEN_INVOICE_STATUSES),
                Invoice.due_date.is_not(None),
                Invoice.due_date <= now.date(),
                db.or_(Invoice.status == INVOICE_SENT, Invoice.reminder_count == 0),
            )
            .order_by(Invoice.due_date, Invoice.id)
            .limit(500)
        )
        .scalars()
        .all()
    )
