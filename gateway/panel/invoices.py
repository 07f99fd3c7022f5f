"""Invoices in the panel: the list, the create/edit form with line items, the detail page and its
actions.
"""

from flask import flash, make_response, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user
from wtforms import (
    DateField,
    FieldList,
    FormField,
    SelectField,
    SelectMultipleField,
    StringField,
    TextAreaField,
)
from wtforms.validators import Length, Optional
from wtforms.widgets import CheckboxInput, ListWidget

from ..answer_commit import unit_of_work
from ..api.paging import paginate
from ..domain_errors import DomainError
from ..errors import http_status
from ..extensions import db
from ..i18n import LANGUAGE_NAMES
from ..i18n import lazy_gettext as _l
from ..invoices.drafting import create_invoice, get_invoice, list_invoices_query, update_invoice
from ..invoices.lifecycle import invoice_url, paying_payment, void_invoice
from ..invoices.models.invoice import INVOICE_STATUSES
from ..invoices.numbering import get_prefix, set_prefix
from ..invoices.pdf import pdf_filename, render_invoice_pdf
from ..invoices.sending import send_invoice
from ..invoices.texts import status_names
from ..payments.customers import list_customers_query
from ..payments.models.payment import Payment
from ..states import INVOICE_DRAFT, INVOICE_OVERDUE, INVOICE_PAID, INVOICE_SENT, INVOICE_VOID
from . import bp
from .access import INVOICES_MANAGE, SETTINGS_MANAGE, VIEW, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm, PanelForm, QueryForm, attach_error, options, strip
from .payments import PER_PAGE, filter_text, page_number

BLANK_ROWS = 3  # empty line-item rows offered below the filled ones (more with "Add lines")
MAX_ROWS = 100
CHANNEL_NAMES = {"email": _l("E-mail (with the PDF)"), "sms": _l("SMS")}
STATUS_BADGES = {
    INVOICE_DRAFT: "cancelled",
    INVOICE_SENT: "pending",
    INVOICE_OVERDUE: "failed",
    INVOICE_PAID: "completed",
    INVOICE_VOID: "expired",
}


class ItemForm(QueryForm):
    """One line item; an entirely empty row is skipped."""

    description = StringField(_l("Description"), filters=[strip], validators=[Length(max=500)])
    quantity = StringField(_l("Qty"), filters=[strip], validators=[Length(max=20)])
    unit_price = StringField(_l("Unit price"), filters=[strip], validators=[Length(max=20)])

    def is_blank(self):
        return not (self.description.data or self.quantity.data or self.unit_price.data)


class InvoiceForm(PanelForm):
    customer_id = SelectField(_l("Customer"), validators=[Optional()])
    customer_name = StringField(
        _l("New customer's name"), filters=[strip], validators=[Optional(), Length(max=200)]
    )
    customer_email = StringField(
        _l("New customer's e-mail"), filters=[strip], validators=[Optional(), Length(max=254)]
    )
    customer_phone = StringField(
        _l("New customer's phone"), filters=[strip], validators=[Optional(), Length(max=20)]
    )
    currency = SelectField(_l("Currency"))
    language = SelectField(
        _l("Language of the invoice"), choices=options(LANGUAGE_NAMES.items()), default="en"
    )
    due_date = DateField(_l("Due date"), validators=[Optional()])
    discount = StringField(_l("Discount"), filters=[strip], default="0")
    vat_rate = StringField(_l("VAT (%)"), filters=[strip], default="0")
    notes = TextAreaField(_l("Notes"), validators=[Optional(), Length(max=2000)])
    items = FieldList(FormField(ItemForm), min_entries=1, max_entries=MAX_ROWS)


class SendForm(PanelForm):
    channels = SelectMultipleField(
        _l("Send by"),
        choices=options(CHANNEL_NAMES.items()),
        default=["email", "sms"],
        option_widget=CheckboxInput(),
        widget=ListWidget(prefix_label=False),
    )
    language = SelectField(_l("Language"), choices=options(LANGUAGE_NAMES.items()))


class PrefixForm(PanelForm):
    prefix = StringField(_l("Number prefix"), filters=[strip], validators=[Length(max=20)])


def customer_choices(brand):
    """The brand's customers for the select, newest first (the first 500)."""
    rows = (
        db.session.execute(list_customers_query(brand, {}, panel_livemode()).limit(500))
        .scalars()
        .all()
    )
    labels = [(str(c.id), " · ".join(filter(None, (c.name, c.email, c.phone)))) for c in rows]
    return options([("", _("— a new customer (fill in below) —"))] + labels)


def invoice_form(brand, invoice=None):
    """The form, filled from the invoice (or empty), with blank item rows to add lines."""
    form = InvoiceForm(obj=invoice) if invoice is not None else InvoiceForm()
    form.customer_id.choices = customer_choices(brand)
    form.currency.choices = options((code, code) for code in brand.currency_list)
    if not form.is_submitted():
        if invoice is not None:
            form.customer_id.data = str(invoice.customer_id)
            form.discount.data = str(invoice.discount)
            form.vat_rate.data = format(invoice.vat_rate.normalize(), "f")
            while len(form.items.entries):
                form.items.pop_entry()
            for item in invoice.items:
                form.items.append_entry(
                    {
                        "description": item.description,
                        "quantity": format(item.quantity.normalize(), "f"),
                        "unit_price": str(item.unit_price),
                    }
                )
        add_blank_rows(form, BLANK_ROWS - (1 if invoice is None else 0))
    return form


def add_blank_rows(form, count):
    """Offer `count` more empty rows (up to MAX_ROWS)."""
    for _row in range(max(0, min(count, MAX_ROWS - len(form.items.entries)))):
        form.items.append_entry()


def form_data(form):
    """What the domain takes from the form: items without blank rows, the customer chosen or new."""
    data = {
        "currency": form.currency.data,
        "language": form.language.data,
        "due_date": form.due_date.data,
        "discount": form.discount.data or "0",
        "vat_rate": form.vat_rate.data or "0",
        "notes": form.notes.data,
        "items": [
            {
                "description": row.form.description.data,
                "quantity": row.form.quantity.data or "1",
                "unit_price": row.form.unit_price.data,
            }
            for row in form.items
            if not row.form.is_blank()
        ],
    }
    if form.customer_id.data:
        data["customer_id"] = form.customer_id.data
    else:
        data["customer"] = {
            "name": form.customer_name.data or None,
            "email": form.customer_email.data or None,
            "phone": form.customer_phone.data or None,
        }
    return data


def place_item_error(form, error):
    """Show an `items.N.field` error on its row (N counts the filled rows the domain saw)."""
    filled = [row for row in form.items if not row.form.is_blank()]
    placed = False
    for item in error.errors or []:
        parts = (item.get("field") or "").split(".")
        if parts[0] == "items" and len(parts) == 3 and parts[1].isdigit():
            index = int(parts[1])
            if index < len(filled):
                field = getattr(filled[index].form, parts[2], None)
                if field is not None:
                    field.errors = list(field.errors) + [item["message"]]
                    placed = True
        elif parts[0] in ("customer", "customer_id"):
            field = {"phone": form.customer_phone, "email": form.customer_email}.get(
                parts[-1], form.customer_id if parts[0] == "customer_id" else form.customer_email
            )
            field.errors = list(field.errors) + [item["message"]]
            placed = True
    if not placed:
        attach_error(form, error)


@bp.get("/invoices")
@requires(VIEW)
def invoices():
    """The brand's invoices, newest first, by status, with a search."""
    brand = current_brand()
    status = request.args.get("status") if request.args.get("status") in INVOICE_STATUSES else None
    text = filter_text("q", 100)
    filters = {k: v for k, v in (("status", status), ("q", text)) if v}
    rows, meta = paginate(
        list_invoices_query(brand.id, filters, panel_livemode()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    return render_template(
        "panel/invoices.html",
        invoices=rows,
        meta=meta,
        filters=filters,
        q=text,
        status_names=status_names(),
        badges=STATUS_BADGES,
        prefix_form=PrefixForm(formdata=None, prefix=get_prefix(brand.id)),
    )


@bp.post("/invoices/prefix")
@requires(SETTINGS_MANAGE)
def invoice_prefix():
    """Change the prefix of the next invoices' numbers."""
    form = PrefixForm()
    if form.validate_on_submit():
        try:
            with unit_of_work():
                prefix = set_prefix(current_brand().id, form.prefix.data)
                record_audit(current_user, "invoice.prefix", None, {"prefix": prefix})
            flash(_("New invoices are numbered %(example)s.", example=f"{prefix}0001"), "success")
        except DomainError as error:
            flash(error.message, "error")
    return redirect(url_for("panel.invoices"))


def render_form(form, invoice=None, status=200):
    """The create/edit page."""
    return render_template("panel/invoice_form.html", form=form, invoice=invoice), status


def save_form(form, invoice=None):
    """Create or update from the form; the response (a redirect, or the form with its errors)."""
    if request.form.get("more_rows"):
        add_blank_rows(form, BLANK_ROWS)
        return render_form(form, invoice)
    if not form.validate_on_submit():
        return render_form(form, invoice, status=422)
    try:
        with unit_of_work():
            if invoice is None:
                invoice = create_invoice(current_brand(), form_data(form), panel_livemode())
                action = "invoice.create"
            else:
                invoice = update_invoice(invoice, form_data(form))
                action = "invoice.update"
            record_audit(
                current_user,
                action,
                ("invoice", invoice.number_text),
                {"total": str(invoice.total), "currency": invoice.currency},
            )
    except DomainError as error:
        place_item_error(form, error)
        return render_form(form, invoice, status=http_status(error))
    flash(_("Invoice %(number)s saved.", number=invoice.number_text), "success")
    return redirect(url_for("panel.invoice_detail", invoice_id=invoice.public_id), code=303)


@bp.route("/invoices/new", methods=["GET", "POST"])
@requires(INVOICES_MANAGE)
def invoice_new():
    """Write a new invoice: a customer, line items, discount, VAT, notes and due date."""
    return (
        save_form(invoice_form(current_brand()))
        if request.method == "POST"
        else render_form(invoice_form(current_brand()))
    )


@bp.route("/invoices/<invoice_id>/edit", methods=["GET", "POST"])
@requires(INVOICES_MANAGE)
def invoice_edit(invoice_id):
    """Change a draft invoice."""
    invoice = get_invoice(current_brand(), invoice_id, panel_livemode())
    if invoice.status != INVOICE_DRAFT:
        flash(_("Only a draft invoice can be changed."), "error")
        return redirect(url_for("panel.invoice_detail", invoice_id=invoice.public_id))
    form = invoice_form(current_brand(), invoice)
    return save_form(form, invoice) if request.method == "POST" else render_form(form, invoice)


@bp.get("/invoices/<invoice_id>")
@requires(VIEW)
def invoice_detail(invoice_id):
    """One invoice: its lines and totals, its payments, and the send, void and PDF actions."""
    invoice = get_invoice(current_brand(), invoice_id, panel_livemode())
    return render_detail(invoice)


def render_detail(invoice, send_form=None, status=200):
    """The detail page."""
    payments = (
        db.session.execute(
            db.select(Payment)
            .where(Payment.invoice_id == invoice.id)
            .order_by(Payment.created_at.desc())
        )
        .scalars()
        .all()
    )
    if send_form is None:
        send_form = SendForm(formdata=None, language=invoice.language)
    return render_template(
        "panel/invoice.html",
        invoice=invoice,
        payments=payments,
        paid_by=paying_payment(invoice) if invoice.status == INVOICE_PAID else None,
        link=invoice_url(invoice),
        send_form=send_form,
        status_names=status_names(),
        badges=STATUS_BADGES,
    ), status


@bp.post("/invoices/<invoice_id>/send")
@requires(INVOICES_MANAGE)
def invoice_send(invoice_id):
    """E-mail and/or text the invoice to its customer; a draft becomes sent."""
    invoice = get_invoice(current_brand(), invoice_id, panel_livemode())
    form = SendForm()
    if not form.validate_on_submit():
        return render_detail(invoice, form, status=422)
    try:
        with unit_of_work():
            send_invoice(invoice, form.channels.data, form.language.data)
            record_audit(
                current_user,
                "invoice.send",
                ("invoice", invoice.number_text),
                {"channels": ",".join(form.channels.data), "language": form.language.data},
            )
    except DomainError as error:
        db.session.refresh(invoice)
        form.channels.errors = list(form.channels.errors) + [error.message]
        return render_detail(invoice, form, status=http_status(error))
    flash(_("Invoice %(number)s is on its way.", number=invoice.number_text), "success")
    return redirect(url_for("panel.invoice_detail", invoice_id=invoice.public_id), code=303)


@bp.post("/invoices/<invoice_id>/void")
@requires(INVOICES_MANAGE)
def invoice_void(invoice_id):
    """Void an unpaid invoice."""
    invoice = get_invoice(current_brand(), invoice_id, panel_livemode())
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                void_invoice(invoice)
                record_audit(current_user, "invoice.void", ("invoice", invoice.number_text))
            flash(_("Invoice %(number)s is void.", number=invoice.number_text), "success")
        except DomainError as error:
            flash(error.message, "error")
    return redirect(url_for("panel.invoice_detail", invoice_id=invoice.public_id), code=303)


@bp.get("/invoices/<invoice_id>/pdf")
@requires(VIEW)
def invoice_pdf(invoice_id):
    """Download the invoice as a PDF (?lang=bn for Bangla)."""
    invoice = get_invoice(current_brand(), invoice_id, panel_livemode())
    language = request.args.get("lang")
    response = make_response(
        render_invoice_pdf(invoice, language if language in LANGUAGE_NAMES else None)
    )
    response.headers["Content-Type"] = "application/pdf"
    response.headers["Content-Disposition"] = f'attachment; filename="{pdf_filename(invoice)}"'
    return response
