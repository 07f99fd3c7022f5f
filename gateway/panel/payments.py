"""Payments: the searchable list and the detail page with its timeline and action forms."""

import re

from flask import render_template, request

from ..api.paging import paginate
from ..db_types import unstorable
from ..extensions import db
from ..payments.lifecycle import checkout_url, get_payment, list_payments_query
from ..payments.models.payment import OPEN_STATUSES, Payment, Transaction
from ..payments.proofs import proof_facts
from ..payments.refunds import REFUNDABLE_STATUSES, refund_remaining
from ..sms.late_money import late_sms
from ..sms.review import needs_review
from ..states import payment_in_review
from ..wallets.unapplied import unapplied_query
from . import bp
from .access import VIEW, current_brand, panel_livemode, requires
from .formatting import day_bounds
from .forms import PaymentFilterForm, RefundForm, RejectForm
from .timeline import payment_timeline
from .wallet_refunds import pending_wallet_refund

PER_PAGE = 25


def like_pattern(text):
    """A LIKE pattern matching `text` anywhere, its wildcards taken literally."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"


def search_clause(text):
    """Rows whose reference, TrxID (ours or the provider's), payment ID, phone or e-mail match
    `text`.
    """
    pattern = like_pattern(text)
    ours = db.select(Transaction.payment_id).where(Transaction.trx_id == text.upper())
    clauses = [
        Payment.reference.ilike(pattern, escape="\\"),
        Payment.provider_trx_id == text.upper(),
        Payment.public_id == text.lower(),
        Payment.customer_email == text.lower(),
        Payment.id.in_(ours),
    ]
    digits = re.sub(r"\D", "", text)
    if len(digits) >= 4:
        # Phones are stored as +8801…; people type 01…, so match on the digits they gave.
        clauses.append(
            Payment.customer_phone.like(like_pattern(digits.lstrip("0") or digits), escape="\\")
        )
    return db.or_(*clauses)


def valid(field):
    """A filter's value, or None when it is empty or invalid (an invalid filter is ignored, not an
    error page).
    """
    return None if field.errors else field.data or None


def filtered_payments(brand, form):
    """The brand's payments narrowed by the filter form."""
    status, method, text = valid(form.status), valid(form.method), valid(form.q)
    start, end = day_bounds(valid(form.date_from), valid(form.date_to))
    query = list_payments_query(
        brand,
        {"status": None if status == "review" else status, "from": start, "to": end},
        panel_livemode(),
    )
    if status == "review":  # held while processing, or cancelled/expired with money that came late
        query = query.where(needs_review())
    if method:
        query = query.where(Payment.provider == method)
    if text:
        query = query.where(search_clause(text))
    return query


def page_number():
    """The ?page= asked for, 1 when missing or nonsense."""
    page = request.args.get("page", "1")
    return min(int(page), 100000) if page.isdigit() and int(page) > 0 else 1


def filter_text(name, max_length):
    """The ?<name>= text a list is narrowed by, trimmed and cut to `max_length`; empty when no
    column could hold it (an invalid filter is ignored, as the filter forms' are)."""
    text = (request.args.get(name) or "").strip()[:max_length]
    return "" if unstorable(text) else text


@bp.get("/payments")
@requires(VIEW)
def payments():
    """The brand's payments, newest first, filtered and paginated."""
    form = PaymentFilterForm(request.args)
    form.validate()
    query = filtered_payments(current_brand(), form)
    rows, meta = paginate(query, {"page": page_number(), "per_page": PER_PAGE})
    filters = {key: value for key, value in request.args.items() if key != "page" and value}
    return render_template(
        "panel/payments.html", form=form, payments=rows, meta=meta, filters=filters
    )


def render_payment(payment, refund_form=None, status=200, refund_confirmation=None):
    """The detail page, with a refund form carrying errors when one was just refused, or a refund to
    confirm.
    """
    context = dict(
        payment=payment,
        timeline=payment_timeline(payment),
        reject_form=RejectForm(formdata=None),
        refund_form=refund_form or RefundForm(formdata=None),
        in_review=payment_in_review(payment),
        can_cancel=payment.status in OPEN_STATUSES,
        checkout_link=checkout_url(payment),
        can_refund=payment.transaction is not None and payment.status in REFUNDABLE_STATUSES,
        remaining=(
            refund_remaining(payment.transaction)
            if payment.transaction is not None
            else payment.amount - payment.amount_refunded
        ),
        late_sms=late_sms(payment),
        refund_confirmation=refund_confirmation,
        proof=proof_facts(payment),
        unapplied=db.session.execute(unapplied_query(payment.brand, payment.livemode, payment))
        .scalars()
        .all(),
        wallet_refund=pending_wallet_refund(payment),
    )
    return render_template("panel/payment.html", **context), status


@bp.get("/payments/<payment_id>")
@requires(VIEW)
def payment_detail(payment_id):
    """One payment: its facts, timeline and what can be done with it."""
    return render_payment(get_payment(current_brand(), payment_id, panel_livemode()))
