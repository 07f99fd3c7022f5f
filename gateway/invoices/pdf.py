"""The invoice as a PDF (fpdf2, HarfBuzz shaping): Latin in Liberation Sans, Bangla and ৳ in Lohit
Bengali.
"""

from flask_babel import gettext as _

from ..payments.dashboard import brand_zone
from ..pdfs import MUTED, RULE, new_document, text
from ..states import INVOICE_DRAFT, INVOICE_OVERDUE, INVOICE_PAID, INVOICE_SENT
from .lifecycle import invoice_url, paying_payment
from .texts import date_text, digits, in_language, money_text, quantity_text, status_names


def pdf_filename(invoice):
    """The PDF's file name: the invoice number, safe in a header and on any file system."""
    return invoice.number_text.replace("/", "-") + ".pdf"


def render_invoice_pdf(invoice, language=None):
    """The invoice's PDF as bytes, in its language (or `language`)."""
    language = language or invoice.language
    with in_language(language):
        pdf = new_document()
        pdf.set_title(_("Invoice %(number)s", number=invoice.number_text))
        pdf.set_author(invoice.brand.name)
        pdf.set_creator("gateway")
        header(pdf, invoice, language)
        parties(pdf, invoice, language)
        items_table(pdf, invoice, language)
        totals(pdf, invoice, language)
        footer_notes(pdf, invoice, language)
        return bytes(pdf.output())


def header(pdf, invoice, language):
    """The brand, the word INVOICE, its number, status and dates."""
    width = pdf.epw
    text(pdf, 18, bold=True)
    pdf.cell(width / 2, 9, invoice.brand.name)
    text(pdf, 18, bold=True)
    pdf.cell(width / 2, 9, _("INVOICE"), align="R", new_x="LMARGIN", new_y="NEXT")
    text(pdf, 11)
    pdf.cell(width, 6, invoice.number_text, align="R", new_x="LMARGIN", new_y="NEXT")
    text(pdf, 10, colour=MUTED)
    pdf.cell(
        width,
        5,
        _("Status: %(status)s", status=status_names()[invoice.status]),
        align="R",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    issued = invoice.created_at.astimezone(brand_zone(invoice.brand)).date()  # as the panel shows
    pdf.cell(
        width,
        5,
        _("Issued: %(date)s", date=date_text(issued, language)),
        align="R",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    if invoice.due_date:
        pdf.cell(
            width,
            5,
            _("Due: %(date)s", date=date_text(invoice.due_date, language)),
            align="R",
            new_x="LMARGIN",
            new_y="NEXT",
        )
    pdf.ln(4)


def parties(pdf, invoice, language):
    """Who the invoice is for."""
    customer = invoice.customer
    text(pdf, 9, bold=True, colour=MUTED)
    pdf.cell(pdf.epw, 5, _("BILL TO"), new_x="LMARGIN", new_y="NEXT")
    text(pdf, 11)
    for line in (customer.name, customer.email, customer.phone):
        if line:
            pdf.cell(pdf.epw, 6, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(5)


def items_table(pdf, invoice, language):
    """Description, quantity, unit price and amount of each line."""
    widths = (pdf.epw * 0.52, pdf.epw * 0.12, pdf.epw * 0.18, pdf.epw * 0.18)
    text(pdf, 9, bold=True, colour=MUTED)
    for label, width, align in zip(
        (_("Description"), _("Qty"), _("Unit price"), _("Amount")), widths, "LRRR", strict=True
    ):
        pdf.cell(width, 7, label, align=align)
    pdf.ln(7)
    pdf.set_draw_color(*RULE)
    pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + pdf.epw, pdf.get_y())
    text(pdf, 10)
    for item in invoice.items:
        top = pdf.get_y()
        pdf.multi_cell(widths[0], 6, item.description, new_x="RIGHT", new_y="TOP")
        bottom = pdf.get_y()
        pdf.set_xy(pdf.l_margin + widths[0], top)
        pdf.cell(widths[1], 6, quantity_text(item.quantity, language), align="R")
        pdf.cell(widths[2], 6, money_text(item.unit_price, invoice.currency, language), align="R")
        pdf.cell(widths[3], 6, money_text(item.amount, invoice.currency, language), align="R")
        pdf.set_xy(pdf.l_margin, max(bottom, top + 6) + 1)
        pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + pdf.epw, pdf.get_y())
    pdf.ln(2)


def totals(pdf, invoice, language):
    """Subtotal, discount, VAT and the total, right-aligned."""
    label_width, value_width = pdf.epw * 0.82, pdf.epw * 0.18
    rows = [(_("Subtotal"), invoice.subtotal)]
    if invoice.discount:
        rows.append((_("Discount"), -invoice.discount))
    if invoice.vat_rate:
        rate = digits(format(invoice.vat_rate.normalize(), "f"), language)
        rows.append((_("VAT (%(rate)s%%)", rate=rate), invoice.vat_amount))
    text(pdf, 10)
    for label, amount in rows:
        pdf.cell(label_width, 6, label, align="R")
        value = money_text(abs(amount), invoice.currency, language)
        pdf.cell(
            value_width,
            6,
            f"−{value}" if amount < 0 else value,
            align="R",
            new_x="LMARGIN",
            new_y="NEXT",
        )
    text(pdf, 13, bold=True)
    pdf.cell(label_width, 9, _("Total"), align="R")
    pdf.cell(
        value_width,
        9,
        money_text(invoice.total, invoice.currency, language),
        align="R",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(4)


def footer_notes(pdf, invoice, language):
    """Notes, then how to pay (or the payment that paid it)."""
    if invoice.notes:
        text(pdf, 9, bold=True, colour=MUTED)
        pdf.cell(pdf.epw, 5, _("NOTES"), new_x="LMARGIN", new_y="NEXT")
        text(pdf, 10)
        pdf.multi_cell(pdf.epw, 5.5, invoice.notes, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    text(pdf, 10)
    if invoice.status == INVOICE_PAID:
        payment = paying_payment(invoice)
        trx = payment.transaction.trx_id if payment is not None and payment.transaction else ""
        text(pdf, 12, bold=True, colour=(6, 118, 71))
        pdf.cell(pdf.epw, 7, _("PAID"), new_x="LMARGIN", new_y="NEXT")
        if payment is not None and payment.provider_trx_id:
            text(pdf, 10)
            pdf.cell(
                pdf.epw,
                6,
                _("TrxID: %(trx)s", trx=payment.provider_trx_id),
                new_x="LMARGIN",
                new_y="NEXT",
            )
        if trx:
            text(pdf, 10)
            pdf.cell(pdf.epw, 6, _("Receipt: %(trx)s", trx=trx), new_x="LMARGIN", new_y="NEXT")
    elif invoice.status == INVOICE_DRAFT:
        # Its customer link answers "not sent yet" until it is sent: a draft's PDF carries none.
        text(pdf, 12, bold=True, colour=(147, 55, 13))
        pdf.cell(pdf.epw, 7, _("DRAFT: not sent yet"), new_x="LMARGIN", new_y="NEXT")
    elif invoice.status in (INVOICE_SENT, INVOICE_OVERDUE):
        pdf.multi_cell(
            pdf.epw,
            5.5,
            _("Pay online: %(link)s", link=invoice_url(invoice)),
            new_x="LMARGIN",
            new_y="NEXT",
        )
