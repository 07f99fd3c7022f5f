"""What an invoice says in words, in English or Bangla: money, dates, messages, the PDF's labels."""

from contextlib import contextmanager
from decimal import Decimal

from flask_babel import force_locale
from flask_babel import gettext as _

from ..states import INVOICE_DRAFT, INVOICE_OVERDUE, INVOICE_PAID, INVOICE_SENT, INVOICE_VOID

CURRENCY_SYMBOLS = {"BDT": "৳", "USD": "$", "EUR": "€", "GBP": "£", "INR": "₹"}
BANGLA_DIGITS = str.maketrans("0123456789", "০১২৩৪৫৬৭৮৯")


@contextmanager
def in_language(language):
    """Translate with the invoice's language inside the block, whatever the request's."""
    with force_locale(language if language in ("en", "bn") else "en"):
        yield


def digits(text, language):
    """Bangla digits for a Bangla invoice; the text unchanged otherwise."""
    return str(text).translate(BANGLA_DIGITS) if language == "bn" else str(text)


def money_text(amount, currency, language="en"):
    """৳1,500.00 (or ৳১,৫০০.০০ in Bangla), $12.50, or the code for other currencies."""
    text = digits(f"{Decimal(amount):,.2f}", language)
    symbol = CURRENCY_SYMBOLS.get(currency)
    return f"{symbol}{text}" if symbol else f"{currency} {text}"


def quantity_text(quantity, language="en"):
    """A quantity without trailing zeros: 2, 1.5."""
    text = format(Decimal(quantity).normalize(), "f")
    return digits(text, language)


def date_text(value, language="en"):
    """A due date as 2026-12-31 (Bangla digits in Bangla)."""
    return digits(value.isoformat(), language) if value else ""


def status_names():
    """The invoice statuses as customers and merchants read them (translated in the caller's
    locale).
    """
    return {
        INVOICE_DRAFT: _("Draft"),
        INVOICE_SENT: _("Unpaid"),
        INVOICE_OVERDUE: _("Overdue"),
        INVOICE_PAID: _("Paid"),
        INVOICE_VOID: _("Void"),
    }


def email_texts(invoice, link, reminder=False):
    """(subject, plain text) of the e-mail that carries the invoice, in the current locale."""
    brand, number = invoice.brand.name, invoice.number_text
    total = money_text(invoice.total, invoice.currency, invoice.language)
    if reminder:
        subject = _(
            "Reminder: invoice %(number)s from %(shop)s is overdue", number=number, shop=brand
        )
        opening = _(
            "Invoice %(number)s for %(total)s was due on %(date)s and is still unpaid.",
            number=number,
            total=total,
            date=date_text(invoice.due_date, invoice.language),
        )
    else:
        subject = _("Invoice %(number)s from %(shop)s", number=number, shop=brand)
        opening = _(
            "%(shop)s has sent you invoice %(number)s for %(total)s.",
            shop=brand,
            number=number,
            total=total,
        )
    lines = [
        _("Hello %(name)s,", name=invoice.customer.name or ""),
        "",
        opening,
    ]
    if invoice.due_date and not reminder:
        lines.append(_("Due date: %(date)s", date=date_text(invoice.due_date, invoice.language)))
    lines += [
        "",
        _("View and pay it here: %(link)s", link=link),
        "",
        _("The invoice is attached as a PDF."),
        "",
        brand,
    ]
    return subject, "\n".join(lines)


def sms_text(invoice, link, reminder=False):
    """The SMS that carries the invoice's link, in the current locale."""
    total = money_text(invoice.total, invoice.currency, invoice.language)
    if reminder:
        return _(
            "%(shop)s: invoice %(number)s (%(total)s) is overdue. Pay: %(link)s",
            shop=invoice.brand.name,
            number=invoice.number_text,
            total=total,
            link=link,
        )
    return _(
        "%(shop)s: invoice %(number)s for %(total)s. View and pay: %(link)s",
        shop=invoice.brand.name,
        number=invoice.number_text,
        total=total,
        link=link,
    )
