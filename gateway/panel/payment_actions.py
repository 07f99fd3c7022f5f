"""What the merchant can do to a payment: refund, cancel, approve or reject a review, settle money
that came late.

Each action calls the same service function as its API twin, so the rules are the API's.
"""

from flask import flash, redirect, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.roles import may_refund, refund_limit
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from ..money import format_amount
from ..payments.lifecycle import cancel_payment, get_payment
from ..payments.manual import approve_manual, is_manual_review, reject_manual
from ..payments.refunds import create_refund, refund_refusal, refund_remaining, refunded_by_user
from ..sms.late_money import complete_late_payment, return_late_sms
from ..sms.review import approve_review, reject_review
from . import bp
from .access import PAYMENTS_ACT, REFUNDS_CREATE, current_brand, panel_livemode, requires
from .audit import record_audit
from .formatting import money
from .forms import ActionForm, RefundForm, RejectForm, attach_error
from .payments import render_payment


def back_to(payment):
    """The payment's detail page."""
    return redirect(url_for("panel.payment_detail", payment_id=payment.public_id))


def refund_recipient(payment):
    """Who the refund goes back to, as the merchant knows them: name and phone, or the number that
    paid.
    """
    phone = payment.customer_phone or payment.sender_number
    parts = [part for part in (payment.customer_name, phone) if part]
    if not parts:
        return payment.customer_email or _("the customer")
    return f"{parts[0]} ({parts[1]})" if len(parts) == 2 else parts[0]


def beyond_refund_limit(done):
    """Why a staff member's refund is refused: the brand's limit on what each staff member refunds
    of a payment in total (0: staff do not refund); `done`, what this one refunded of it already.
    """
    limit = refund_limit(current_user, current_brand())
    if not limit:
        return _("Your role cannot record refunds. Ask an owner or an admin.")
    if done:
        return _(
            "Staff can refund at most %(amount)s of a payment in total; you have already refunded"
            " %(done)s of this one.",
            amount=format_amount(limit),
            done=format_amount(done),
        )
    return _(
        "Staff can refund at most %(amount)s of a payment in total.", amount=format_amount(limit)
    )


@bp.post("/payments/<payment_id>/refund")
@requires(REFUNDS_CREATE)
def refund_payment(payment_id):
    """Refund all that remains, or the amount given: the first POST asks to confirm, only the
    confirmed one records.
    """
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    form = RefundForm()
    if not form.validate_on_submit():
        return render_payment(payment, form, 422)
    if payment.transaction is None:
        form.amount.errors = [_("Only a completed payment can be refunded.")]
        return render_payment(payment, form, 409)
    amount = form.amount.data or refund_remaining(payment.transaction)
    done = refunded_by_user(payment.transaction.id, current_user.id)
    if not may_refund(current_user, current_brand(), done + amount):
        if refund_limit(current_user, current_brand()):
            form.amount.errors = [beyond_refund_limit(done)]
        else:  # the page shows no refund form to this user: say it at the top
            flash(beyond_refund_limit(done), "error")
        return render_payment(payment, form, 403)
    if not form.confirmed.data:
        return ask_refund_confirmation(payment, form)
    try:
        refund = create_refund(
            current_brand(),
            payment.transaction.trx_id,
            form.amount.data,
            form.reason.data,
            refunded_by=current_user.id,
            limit=refund_limit(current_user, current_brand()),
            livemode=payment.livemode,
            asked_by=current_user,
        )
    except DomainError as error:
        attach_error(form, error)
        return render_payment(
            get_payment(current_brand(), payment_id, panel_livemode()), form, http_status(error)
        )
    flash(
        _("Refunded %(amount)s.", amount=money(refund.amount, payment.currency)),
        "success",
    )
    return back_to(payment)


def ask_refund_confirmation(payment, form):
    """The payment page with the refund spelt out (amount fixed now, recipient named) and a confirm
    button.
    """
    refusal = refund_refusal(payment.transaction, form.amount.data)
    if refusal is not None:  # say so now, not after the merchant has confirmed
        attach_error(form, refusal)
        return render_payment(payment, form, http_status(refusal))
    amount = form.amount.data or refund_remaining(payment.transaction)
    confirmation = {
        "amount": amount,
        "amount_text": format_amount(amount),
        "recipient": refund_recipient(payment),
        "reason": form.reason.data,
    }
    return render_payment(payment, form, 200, refund_confirmation=confirmation)


@bp.post("/payments/<payment_id>/cancel")
@requires(PAYMENTS_ACT)
def cancel(payment_id):
    """Cancel a payment that is still created or processing."""
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                cancel_payment(payment)
                record_audit(current_user, "payment.cancel", payment)
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("The payment is cancelled."), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/approve")
@requires(PAYMENTS_ACT)
def approve(payment_id):
    """Accept a payment held for review: its held SMS is matched and the payment completes (the
    service decides).
    """
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    if ActionForm().validate_on_submit():
        reason = payment.review_reason
        manual = is_manual_review(payment)
        try:
            with unit_of_work():
                # A manual claim holds no SMS: the merchant's word completes it.
                transaction = approve_manual(payment) if manual else approve_review(payment)
                record_audit(
                    current_user,
                    "payment.approve",
                    payment,
                    {
                        "trx_id": transaction.trx_id,
                        "review_reason": reason,
                        **({"reference": payment.provider_trx_id} if manual else {}),
                    },
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("Approved: the payment is completed."), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/reject")
@requires(PAYMENTS_ACT)
def reject(payment_id):
    """Refuse a payment held for review: it fails, and its held SMS is released to be matched by
    hand.
    """
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    form = RejectForm()
    if form.validate_on_submit():
        review_reason = payment.review_reason
        try:
            with unit_of_work():
                if is_manual_review(payment):  # the reason is the customer's to read
                    reject_manual(payment, form.reason.data)
                else:
                    reject_review(payment, form.reason.data or review_reason)
                record_audit(
                    current_user,
                    "payment.reject",
                    payment,
                    {"review_reason": review_reason, "reason": form.reason.data or None},
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("Rejected: the payment is marked failed."), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/late/complete")
@requires(PAYMENTS_ACT)
def complete_late(payment_id):
    """Keep money that came after the payment was cancelled or expired: the payment completes (the
    service guards).
    """
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    if ActionForm().validate_on_submit():
        reason = payment.review_reason
        try:
            with unit_of_work():
                transaction = complete_late_payment(payment)
                record_audit(
                    current_user,
                    "payment.complete_late",
                    payment,
                    {"trx_id": transaction.trx_id, "review_reason": reason},
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("Completed: the payment is paid and your shop is told."), "success")
    return back_to(payment)


@bp.post("/payments/<payment_id>/late/return")
@requires(PAYMENTS_ACT)
def return_late(payment_id):
    """Record that the late money was sent back to the customer: the payment stays as it was."""
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                sms = return_late_sms(payment)
                record_audit(
                    current_user,
                    "payment.return_late",
                    payment,
                    {
                        "amount": format_amount(sms.amount),
                        "to": sms.counterparty,
                        "provider_trx_id": sms.provider_trx_id,
                    },
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("Recorded: the money was returned to the customer."), "success")
    return back_to(payment)
