"""The customer's receipt of a paid payment, at /checkout/<token>/receipt: a page and a PDF, in
English or Bangla.

Reachable only by the payment's token and only once it is paid; never indexed. The panel's counter
prints the same receipt (gateway/panel/counter.py).
"""

from collections import namedtuple
from datetime import timezone
from decimal import Decimal

from babel.dates import format_datetime
from babel.numbers import format_decimal
from flask import abort, make_response, render_template

from ..i18n import lazy_gettext as _l
from ..numerals import clock_style, money_pattern, native_digits, page_locale
from ..payments.models.payment import PAID_STATUSES
from ..pdfs import MUTED, RULE, new_document, text
from ..states import PAYMENT_PARTIALLY_REFUNDED, PAYMENT_REFUNDED
from .pages import find_payment
from .presenters import CURRENCY_SYMBOLS, brand_zone, provider_name
from .theme import brand_theme
from .views import bp

# Search engines and archives must not keep a receipt, whatever the page says.
A5 = (148, 210)  # millimetres: fpdf2 warns on the name "A5" (its size changed in 2.8.5)
NOT_INDEXED = "noindex, nofollow, noarchive"
Line = namedtuple("Line", "label value mono")


def receipt_money(amount, currency="BDT"):
    """৳1,500.00 (৳১,৫০০.০০ on a Bangla page), $12.50, or the code for other currencies."""
    figures = native_digits(format_decimal(Decimal(amount), money_pattern(), locale="en"))
    symbol = CURRENCY_SYMBOLS.get(currency)
    return f"{symbol}{figures}" if symbol else f"{currency} {figures}"


def receipt_time(moment, brand):
    """When it was paid, in the brand's zone and the page's language: 28 Nov 2026, 17:05."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    style = clock_style("d MMM y, HH:mm")
    return native_digits(
        format_datetime(moment, style, tzinfo=brand_zone(brand), locale=page_locale())
    )


def is_paid(payment):
    """Whether a receipt exists: completed, partially refunded or refunded."""
    return payment is not None and payment.status in PAID_STATUSES


def paid_payment_or_404(token):
    """The paid payment behind a token; 404 for an unknown token and before the money came."""
    payment = find_payment(token)
    if not is_paid(payment):
        abort(404)
    return payment


def receipt_lines(payment):
    """What the receipt says, in the page's language: (label, value, mono) in reading order."""
    brand = payment.brand
    lines = [Line(_l("Shop"), brand.name, False)]
    if payment.reference:
        lines.append(Line(_l("Order"), payment.reference, False))
    lines.append(Line(_l("Amount"), receipt_money(payment.amount, payment.currency), False))
    if payment.exchange_rate is not None and payment.amount_bdt is not None:
        lines.append(Line(_l("Amount in taka"), receipt_money(payment.amount_bdt), False))
    lines.append(Line(_l("Fee"), receipt_money(payment.fee or 0), False))
    paid = payment.amount_paid if payment.amount_paid is not None else payment.amount
    lines.append(Line(_l("Total paid"), receipt_money(paid), False))
    if payment.provider:
        lines.append(Line(_l("Paid with"), provider_name(payment.provider), False))
    if payment.provider_trx_id:
        lines.append(Line(_l("TrxID"), payment.provider_trx_id, True))
    if payment.trx_id:
        lines.append(Line(_l("Receipt number"), payment.trx_id, True))
    moment = payment.completed_at or payment.updated_at
    lines.append(Line(_l("Paid at"), receipt_time(moment, brand), False))
    if payment.status in (PAYMENT_PARTIALLY_REFUNDED, PAYMENT_REFUNDED):
        refunded = receipt_money(payment.amount_refunded, payment.currency)
        lines.append(Line(_l("Refunded"), refunded, False))
    return lines


def receipt_title():
    """The receipt's heading."""
    return _l("Payment receipt")


def render_receipt_page(payment, printing_from_panel=False):
    """The receipt as a printable page in the brand's colours (also the counter's print view)."""
    return render_template(
        "receipt.html",
        payment=payment,
        brand=payment.brand,
        theme=brand_theme(payment.brand),
        lines=receipt_lines(payment),
        title=receipt_title(),
        from_panel=printing_from_panel,
    )


def render_receipt_pdf(payment):
    """The receipt as an A5 PDF in the page's language (Bangla shaped with the bundled font)."""
    pdf = new_document(A5)
    pdf.set_margins(14, 14, 14)
    pdf.set_title(str(receipt_title()))
    pdf.set_author(payment.brand.name)
    pdf.set_creator("gateway")
    text(pdf, 16, bold=True)
    pdf.multi_cell(pdf.epw, 8, payment.brand.name, new_x="LMARGIN", new_y="NEXT")
    text(pdf, 12, colour=MUTED)
    pdf.cell(pdf.epw, 7, str(receipt_title()), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    pdf.set_draw_color(*RULE)
    label_width, value_width = pdf.epw * 0.42, pdf.epw * 0.58
    for line in receipt_lines(payment)[1:]:  # the shop is the heading
        pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + pdf.epw, pdf.get_y())
        text(pdf, 10, colour=MUTED)
        top = pdf.get_y()
        pdf.cell(label_width, 8, str(line.label))
        text(pdf, 11, bold=not line.mono)
        pdf.set_xy(pdf.l_margin + label_width, top)
        pdf.multi_cell(value_width, 8, str(line.value), align="R", new_x="LMARGIN", new_y="NEXT")
    pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + pdf.epw, pdf.get_y())
    return bytes(pdf.output())


def not_indexed(response):
    """No search engine keeps it (the page's meta tag says so too)."""
    response.headers["X-Robots-Tag"] = NOT_INDEXED
    return response


@bp.get("/<token>/receipt")
def receipt(token):
    """The receipt page of a paid payment."""
    return not_indexed(make_response(render_receipt_page(paid_payment_or_404(token))))


@bp.get("/<token>/receipt.pdf")
def receipt_pdf(token):
    """The receipt as a PDF download, in the page's language."""
    payment = paid_payment_or_404(token)
    response = make_response(render_receipt_pdf(payment))
    response.headers["Content-Type"] = "application/pdf"
    name = f"receipt-{payment.trx_id or payment.public_id}-{page_locale()}.pdf"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return not_indexed(response)
