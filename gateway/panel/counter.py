"""The counter screen (/panel/counter): a sale at the till. Type the amount, show the QR of the
checkout link and the number, and see "Paid" the moment the payment completes (docs/methods.md).

The sale is an ordinary payment (payments.lifecycle.create_payment) in the panel's mode; the sale
page polls a small JSON status (counter.js) and flips to "Paid" without a reload.
"""

import secrets

import marshmallow as ma
import segno
from flask import jsonify, redirect, render_template, url_for
from flask_login import current_user
from markupsafe import Markup
from wtforms import SelectField, StringField
from wtforms.validators import DataRequired, Length, Optional, ValidationError

from ..answer_commit import unit_of_work
from ..checkout.presenters import KIND_ACTIONS, checkout_state, provider_name, seconds_left
from ..checkout.receipts import receipt_money, render_receipt_page
from ..i18n import lazy_gettext as _l
from ..money import InvalidAmount, parse_amount
from ..payments.amounts import charge_fee
from ..payments.fees import fee_for
from ..payments.lifecycle import checkout_url, create_payment, get_payment
from ..payments.methods import enabled_method, list_enabled_methods
from ..schemas.payment import PaymentCreateSchema
from ..states import PAYMENT_COMPLETED
from . import bp
from .access import PAYMENTS_ACT, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import PanelForm, strip

REFERENCE_PREFIX = "COUNTER-"
NOTE_MAX = 200  # well inside a metadata value's 500 characters


def counter_reference():
    """A sale's reference: COUNTER- and eight characters, unique enough to read out at the till."""
    return REFERENCE_PREFIX + secrets.token_hex(4).upper()


def checked_amount(form, field):
    """The amount as a Decimal above zero (commas allowed)."""
    try:
        field.data = parse_amount((field.data or "").replace(",", ""))
    except InvalidAmount:
        raise ValidationError(_l("Enter an amount such as 500 or 500.50.")) from None
    if field.data <= 0:
        raise ValidationError(_l("Amount must be greater than zero."))


class CounterSaleForm(PanelForm):
    """What the cashier types: the amount, a note for themselves, the number the customer pays."""

    amount = StringField(
        _l("Amount (৳)"), filters=[strip], validators=[DataRequired(), checked_amount]
    )
    note = StringField(
        _l("Note"),
        filters=[strip],
        validators=[Optional(), Length(max=NOTE_MAX)],
        description=_l("Optional, for you: e.g. table 4, or what was sold."),
    )
    method_id = SelectField(_l("Pay to"), coerce=str, validate_choice=True)

    def offer(self, methods):
        """The brand's enabled numbers as the choices."""
        self.method_id.choices = [
            (str(method.id), f"{provider_name(method.provider)} · {method_label(method)}")
            for method in methods
        ]


def counter_methods(brand):
    """The numbers a customer at the till can pay to: the enabled wallets (a manual or bank method
    has no number to show or put in a QR)."""
    return [method for method in list_enabled_methods(brand) if counter_can_use(method)]


def counter_can_use(method):
    """A wallet number (the customer sends to it), or a wallet's own API (the customer scans the
    checkout link and pays on bKash's or Nagad's page); a manual or bank method has neither."""
    return method.has_number or method.is_wallet_api


def method_label(method):
    """What the picker shows after the wallet's name: the number, or that it pays in the app."""
    return method.number if method.has_number else str(_l("pay in the app"))


def render_form(form=None, status=200):
    """The sale form; without an enabled number it says where to add one."""
    methods = counter_methods(current_brand())
    if form is None:
        form = CounterSaleForm(formdata=None)
    form.offer(methods)
    return render_template("panel/counter.html", form=form, methods=methods), status


def sale_payment(payment_id):
    """A counter sale of the brand in the panel's mode; NotFound (404) for anything else."""
    return get_payment(current_brand(), payment_id, livemode=panel_livemode())


def sale_method(payment):
    """The number the cashier picked for this sale (None once it is switched off)."""
    return enabled_method(payment.brand, (payment.metadata_json or {}).get("method_id"))


def large_qr(link):
    """The checkout link as an inline SVG QR code, drawn as large as the screen allows by CSS."""
    code = segno.make(link, error="m", micro=False)
    svg = code.svg_inline(
        scale=1, border=2, dark="#111827", light="#ffffff", omitsize=True, svgclass="counter-qr"
    )
    return Markup(svg.replace("<svg ", '<svg role="img" aria-label="QR" ', 1))


def sale_status(payment):
    """What the sale page shows now: the checkout's state and, once paid, the amount and TrxIDs."""
    state = checkout_state(payment)
    paid = state == PAYMENT_COMPLETED
    total = payment.amount_paid if payment.amount_paid is not None else payment.amount
    return {
        "status": state,
        "paid": paid,
        "amount_text": receipt_money(total),
        "provider_trx_id": payment.provider_trx_id if paid else None,
        "trx_id": payment.trx_id if paid else None,
        "seconds_left": seconds_left(payment),
    }


@bp.get("/counter")
@requires(PAYMENTS_ACT)
def counter():
    """The sale form: amount, note, the number to pay to."""
    return render_form()


@bp.post("/counter")
@requires(PAYMENTS_ACT)
def counter_sale():
    """Start a sale: a payment of the amount, in the panel's mode, then its QR page."""
    methods = counter_methods(current_brand())
    form = CounterSaleForm()
    form.offer(methods)
    if not form.validate_on_submit():
        return render_form(form, 422)
    method = enabled_method(current_brand(), form.method_id.data)
    if method is None or not counter_can_use(
        method
    ):  # switched off meanwhile, or no number to show
        form.method_id.errors = [_l("Choose a number that is switched on.")]
        return render_form(form, 422)
    metadata = {"source": "counter", "method_id": str(method.id)}
    if form.note.data:
        metadata["note"] = form.note.data
    try:
        data = PaymentCreateSchema().load(
            {
                "amount": str(form.amount.data),
                "currency": "BDT",
                "reference": counter_reference(),
                "metadata": metadata,
            }
        )
    except ma.ValidationError as error:
        for name, messages in error.messages.items():
            field = getattr(form, name, form.amount)
            field.errors = list(field.errors) + list(messages)
        return render_form(form, 422)
    with unit_of_work():
        payment = create_payment(current_brand(), data, livemode=panel_livemode())
        # The screen shows what the customer sends to this number: its fee is charged now (the
        # checkout charges the method the customer finally claims with, as for any payment).
        charge_fee(payment, fee_for(method, payment.amount_bdt))
        record_audit(
            current_user,
            "payment.counter_sale",
            payment,
            {"amount": str(payment.amount), "reference": payment.reference},
        )
    return redirect(url_for("panel.counter_sale_page", payment_id=payment.public_id), 303)


@bp.get("/counter/<payment_id>")
@requires(PAYMENTS_ACT)
def counter_sale_page(payment_id):
    """The sale on screen: QR, number and amount while open; "Paid" once it is; or how it ended."""
    payment = sale_payment(payment_id)
    method = sale_method(payment)
    link = checkout_url(payment)
    return render_template(
        "panel/counter_sale.html",
        payment=payment,
        method=method,
        action=KIND_ACTIONS.get(method.kind) if method is not None else None,
        link=link,
        qr=large_qr(link),
        sale=sale_status(payment),
        note=(payment.metadata_json or {}).get("note"),
        status_url=url_for("panel.counter_sale_status", payment_id=payment.public_id),
    )


@bp.get("/counter/<payment_id>/status")
@requires(PAYMENTS_ACT)
def counter_sale_status(payment_id):
    """The small JSON the sale page polls: {status, paid, amount_text, provider_trx_id, trx_id}."""
    return jsonify(sale_status(sale_payment(payment_id)))


@bp.get("/counter/<payment_id>/receipt")
@requires(PAYMENTS_ACT)
def counter_receipt(payment_id):
    """The printable receipt of a paid sale (the customer's own receipt, printed at the till)."""
    payment = sale_payment(payment_id)
    if checkout_state(payment) != PAYMENT_COMPLETED:
        return redirect(url_for("panel.counter_sale_page", payment_id=payment.public_id))
    return render_receipt_page(payment, printing_from_panel=True)
