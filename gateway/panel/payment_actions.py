"""What the merchant can do to a payment: refund, cancel, and approve or reject one held for review.

Each action calls the same service function as its API twin, so the rules are the API's.
"""
from flask import flash, redirect, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..errors import ApiError
from ..money import format_amount
from ..services.matching import approve_review, reject_review
from ..services.payments import cancel_payment, get_payment
from ..services.refunds import create_refund
from . import bp
from .access import current_brand, staff_required
from .audit import record_audit
from .forms import ActionForm, RefundForm, RejectForm, attach_error
from .payments import render_payment


def back_to(payment):
    """The payment's detail page."""
    return redirect(url_for("panel.payment_detail", payment_id=payment.public_id))


@bp.post("/payments/<payment_id>/refund")
@staff_required
def refund_payment(payment_id):
    """Refund all that remains, or the amount given."""
    payment = get_payment(current_brand(), payment_id)
    form = RefundForm()
    if not form.validate_on_submit():
        return render_payment(payment, form, 422)
    if payment.transaction is None:
        form.amount.errors = [_("Only a completed payment can be refunded.")]
        return render_payment(payment, form, 409)
    try:
        refund = create_refund(current_brand(), payment.transaction.trx_id, form.amount.data, form.reason.data)
    except ApiError as error:
        attach_error(form, error)
        return render_payment(get_payment(current_brand(), payment_id), form, error.status)
    record_audit(current_user, "payment.refund", payment, {
        "refund_id": refund.id, "amount": format_amount(refund.amount), "reason": refund.reason})
    flash(_("Refunded %(amount)s.", amount=format_amount(refund.amount) + " " + payment.currency), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/cancel")
@staff_required
def cancel(payment_id):
    """Cancel a payment that is still created or processing."""
    payment = get_payment(current_brand(), payment_id)
    if ActionForm().validate_on_submit():
        try:
            cancel_payment(payment)
        except ApiError as error:
            flash(error.message, "error")
        else:
            record_audit(current_user, "payment.cancel", payment)
            flash(_("The payment is cancelled."), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/approve")
@staff_required
def approve(payment_id):
    """Accept a payment held for review: its held SMS is matched and the payment completes (the service decides)."""
    payment = get_payment(current_brand(), payment_id)
    if ActionForm().validate_on_submit():
        reason = payment.review_reason
        try:
            transaction = approve_review(payment)
        except ApiError as error:
            flash(error.message, "error")
        else:
            record_audit(current_user, "payment.approve", payment, {"trx_id": transaction.trx_id, "review_reason": reason})
            flash(_("Approved: the payment is completed."), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/reject")
@staff_required
def reject(payment_id):
    """Refuse a payment held for review: it fails, and its held SMS is released to be matched by hand."""
    payment = get_payment(current_brand(), payment_id)
    form = RejectForm()
    if form.validate_on_submit():
        review_reason = payment.review_reason
        try:
            reject_review(payment, form.reason.data or review_reason)
        except ApiError as error:
            flash(error.message, "error")
        else:
            record_audit(current_user, "payment.reject", payment,
                         {"review_reason": review_reason, "reason": form.reason.data or None})
            flash(_("Rejected: the payment is marked failed."), "success")
    return back_to(payment)
