"""The customer's invoice at /invoice/<token>: read it, download the PDF, pay it at the checkout."""

from flask import (
    Blueprint,
    abort,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import get_locale
from flask_wtf import FlaskForm

from ..domain_errors import InvalidState, NotFound
from ..invoices.drafting import InvoiceNotSent, get_invoice_by_token
from ..invoices.lifecycle import pay_invoice, paying_payment
from ..invoices.pdf import pdf_filename, render_invoice_pdf
from ..invoices.texts import date_text, money_text, quantity_text, status_names
from ..states import INVOICE_PAID
from .pages import (
    allow_brand_logo,
    language_url,
    protect_response,
    render_checkout,
    render_http_error,
)
from .theme import brand_theme

bp = Blueprint("invoice_page", __name__, url_prefix="/invoice")
bp.after_request(protect_response)
bp.register_error_handler(404, render_http_error)


class PayForm(FlaskForm):
    """The Pay button: only the CSRF token."""


def invoice_or_404(token):
    """The invoice behind the link (never a draft: "not sent yet"), or the not-found page."""
    if not token or len(token) > 64:
        abort(404)
    try:
        return get_invoice_by_token(token)
    except NotFound:
        abort(404)
    except InvoiceNotSent as draft:
        # A draft's PDF once carried this link: say what is going on, not "payment not found".
        abort(render_not_sent(draft.brand))


def render_not_sent(brand):
    """A link to a draft: "not sent yet" in the brand's look, with none of the draft's contents."""
    page, status = render_checkout("checkout/result.html", None, 404, brand, kind="not_sent")
    return make_response(page, status)


def render_invoice(invoice, status=200):
    """The invoice page in the brand's look."""
    brand = invoice.brand
    language = str(get_locale() or "en")  # Bangla pages show Bangla digits, as the PDF does
    allow_brand_logo(brand)
    return render_template(
        "invoice/invoice.html",
        invoice=invoice,
        brand=brand,
        theme=brand_theme(brand),
        language_url=language_url,
        paid_by=paying_payment(invoice) if invoice.status == INVOICE_PAID else None,
        form=PayForm(),
        money=lambda amount: money_text(amount, invoice.currency, language),
        quantity=lambda value: quantity_text(value, language),
        day=lambda value: date_text(value, language),
        status_name=status_names()[invoice.status],
    ), status


@bp.get("/<token>")
def invoice_page(token):
    """The invoice as the customer reads it, with a Pay button while it is unpaid."""
    return render_invoice(invoice_or_404(token))


@bp.post("/<token>/pay")
def invoice_pay(token):
    """Start (or resume) the payment of the invoice's total and go to the hosted checkout."""
    invoice = invoice_or_404(token)
    if not PayForm().validate_on_submit():
        return render_invoice(invoice, status=400)
    try:
        payment = pay_invoice(invoice)
    except InvalidState:
        return render_invoice(invoice, status=409)
    return redirect(url_for("checkout.checkout_page", token=payment.token), code=303)


@bp.get("/<token>/pdf")
def invoice_pdf(token):
    """The invoice as a PDF, in the page's language (?lang=bn for Bangla)."""
    invoice = invoice_or_404(token)
    language = request.args.get("lang") or invoice.language
    pdf = render_invoice_pdf(invoice, language if language in ("en", "bn") else None)
    response = make_response(pdf)
    response.headers["Content-Type"] = "application/pdf"
    response.headers["Content-Disposition"] = f'attachment; filename="{pdf_filename(invoice)}"'
    return response
