"""Checkout routes: the pay page, the TrxID claim, cancel, the waiting page and its JSON status."""

from flask import Blueprint, abort, current_app, g, jsonify, redirect, request, url_for

from ..domain_errors import DomainError, InvalidState
from ..errors import http_status
from ..extensions import db
from ..links.paying import reference_to_type
from ..payments import methods as payment_methods
from ..payments.fees import fee_for
from ..payments.lifecycle import cancel_payment
from ..payments.models.payment import OPEN_STATUSES
from ..rate_limits import limited
from ..sms.claims import reopen_claim
from ..sms.matching import submit_claim
from ..states import PAYMENT_CANCELLED, PAYMENT_COMPLETED, PAYMENT_CREATED, PAYMENT_PROCESSING
from ..states import payment_in_review as in_review
from .forms import CLAIM_REFUSALS, METHOD_GONE, CancelForm, ClaimForm, ManualClaimForm
from .pages import find_payment, page_url, register_pages, render_checkout, render_result
from .presenters import (
    checkout_state,
    claimed_fee_texts,
    local_time,
    method_charges,
    method_steps,
    qr_svg,
    return_url,
    seconds_left,
)

bp = Blueprint("checkout", __name__, url_prefix="/checkout")
register_pages(bp)


def payment_or_404(token):
    """The payment behind the token, or the checkout's not-found page."""
    payment = find_payment(token)
    if payment is None:
        abort(404)
    return payment


def completion_url(payment):
    """Where a paid customer goes: the merchant's redirect_url, else our own success page."""
    return return_url(payment.redirect_url, payment, PAYMENT_COMPLETED) or page_url(payment)


def waiting_url(payment):
    """The page that waits for the payment to be confirmed."""
    return url_for("checkout.waiting", token=payment.token)


def render_pay_page(
    payment, form=None, chosen=None, status=200, manual_form=None, wallet_notice=None
):
    """The pay page: amount, countdown, each enabled method with its fee and total, number, QR,
    steps and form (a manual or bank method: its account and the reference form,
    checkout/_manual_method.html; a wallet's API: its button, checkout/_wallet_api_method.html,
    with `wallet_notice`, why the last trip to the wallet did not pay)."""
    methods = payment_methods.list_enabled_methods(payment.brand)
    wallets = [method for method in methods if method.has_number]
    charges = method_charges(payment, methods)
    untyped = f"{payment.amount:.2f}"  # no taka amount: no SMS can pay it, shown as asked
    reference = reference_to_type(payment)
    return render_checkout(
        "checkout/pay.html",
        payment,
        status,
        methods=methods,
        form=form or ClaimForm(),
        manual_form=manual_form or ManualClaimForm(formdata=None),
        chosen=chosen or preferred_method_id(payment, methods),
        seconds_left=seconds_left(payment),
        expires_at_text=local_time(payment.expires_at, payment.brand),
        order_reference=reference,
        charges=charges,
        steps={
            method.id: method_steps(
                method, charges[method.id].typed if charges else untyped, reference
            )
            for method in wallets
        },
        qr_codes={method.id: qr_svg(method.number) for method in wallets},
        wallet_notice=wallet_notice,
    )


def preferred_method_id(payment, methods):
    """The method the pay page opens on: the number a counter sale showed (its metadata's
    method_id) while it is enabled, else the first."""
    wanted = str((payment.metadata_json or {}).get("method_id", ""))
    for method in methods:
        if str(method.id) == wanted:
            return method.id
    return methods[0].id if methods else None


@bp.get("/<token>")
def checkout_page(token):
    """What the customer sees at checkout_url, whatever state the payment is in."""
    payment = payment_or_404(token)
    state = checkout_state(payment)
    if state == PAYMENT_CREATED:
        return render_pay_page(payment)
    if state == PAYMENT_PROCESSING:
        return redirect(waiting_url(payment))
    return render_result(state, payment)


def claim_rate_limit():
    """TrxID attempts allowed per payment, e.g. 10/hour (CHECKOUT_CLAIM_RATE_LIMIT)."""
    return current_app.config["CHECKOUT_CLAIM_RATE_LIMIT"]


def claim_bucket():
    """Attempts are counted per payment, so guessing TrxIDs for one payment is slow from any
    address.
    """
    return "checkout-claim:" + (request.view_args or {}).get("token", "")


def claim_attempted(response):
    """Only TrxIDs that reached matching count against the limit, not typos the form caught."""
    return g.get("claim_attempted", False)


def claim_limit():
    """One budget of TrxID attempts per payment, shared by the first claim and every correction."""
    return limited(claim_rate_limit, claim_bucket, scope="checkout-claim", counts=claim_attempted)


@bp.post("/<token>/claim")
@claim_limit()
def claim(token):
    """The customer's provider TrxID: move the payment to processing (or straight to completed)."""
    payment = payment_or_404(token)
    if checkout_state(payment) != PAYMENT_CREATED:
        return redirect(page_url(payment), 303)
    method = payment_methods.enabled_method(payment.brand, request.form.get("method_id"))
    form = ClaimForm(method=method)
    if method is None or not method.has_number:  # a manual or bank method posts to manual_claim
        form.method_id.errors = [METHOD_GONE]
        return render_pay_page(payment, form, status=422)
    if not form.validate():
        return render_pay_page(payment, form, chosen=method.id, status=422)
    g.claim_attempted = True  # only TrxIDs that reach matching count against the limit, not typos
    try:
        submit_claim(
            payment,
            method.provider,
            form.trx_id.data,
            sender_number=form.sender_number.data,
            fee=fee_for(method, payment.amount_bdt),
        )
    except DomainError as error:
        if isinstance(error, InvalidState):
            return redirect(page_url(payment), 303)
        codes = [item.get("code") for item in error.errors or []]
        form.trx_id.errors = [CLAIM_REFUSALS.get(codes[0] if codes else None, CLAIM_REFUSALS[None])]
        return render_pay_page(payment, form, chosen=method.id, status=http_status(error))
    return redirect(waiting_url(payment), 303)


@bp.post("/<token>/cancel")
def cancel(token):
    """The customer gives up: cancel and send them to the merchant's cancel_url.

    After "I have paid" (processing) the first POST only shows what cancelling means for money
    already sent; the confirmed POST cancels. Unconfirmed, only a `created` payment can be
    cancelled, so a claim committing meanwhile is never cancelled by a tap meant for the pay page.
    """
    payment = payment_or_404(token)
    form = CancelForm()
    if not form.validate_on_submit():
        abort(400)
    if in_review(payment):  # the merchant is checking it: only their approve or reject settles it
        return redirect(page_url(payment), 303)
    if payment.status == PAYMENT_PROCESSING and not form.confirmed:
        return render_checkout("checkout/cancel.html", payment, waiting_url=waiting_url(payment))
    try:
        cancel_payment(payment, from_states=OPEN_STATUSES if form.confirmed else (PAYMENT_CREATED,))
    except DomainError:
        return redirect(page_url(payment), 303)
    cancelled_url = return_url(payment.cancel_url, payment, PAYMENT_CANCELLED)
    return redirect(cancelled_url or page_url(payment), 303)


@bp.get("/<token>/wait")
def waiting(token):
    """Waiting for the SMS: refreshes itself (meta refresh, or JavaScript polling) until the payment
    settles.
    """
    payment = payment_or_404(token)
    state = checkout_state(payment)
    if state == PAYMENT_COMPLETED:
        return redirect(completion_url(payment))
    if state != PAYMENT_PROCESSING:
        return redirect(page_url(payment))
    return render_waiting_page(payment)


def wallet_methods(brand):
    """The brand's enabled wallet methods (not manual or bank ones)."""
    return [m for m in payment_methods.list_enabled_methods(brand) if m.has_number]


def correction_method(payment, methods):
    """The method the correction form starts on: the enabled one of the provider claimed with, else
    the first.
    """
    return next(
        (method for method in methods if method.provider == payment.provider),
        methods[0] if methods else None,
    )


def render_waiting_page(payment, form=None, status=200, chosen=None):
    """The waiting page; unless the payment is held for review, with a correction (method and TrxID)
    and a cancel.
    """
    held = in_review(payment)
    # Only a wallet claim is corrected here: a bank claim waits for its alert, a manual one is held.
    methods = [] if held else wallet_methods(payment.brand)
    method = chosen or correction_method(payment, methods)
    if form is None and method is not None:
        form = ClaimForm(method=method, data={"sender_number": payment.sender_number})
    return render_checkout(
        "checkout/waiting.html",
        payment,
        status,
        held=held,
        method=method,
        methods=methods,
        form=form,
        fee_texts=claimed_fee_texts(payment),
        status_url=url_for("checkout.status", token=payment.token),
    )


@bp.post("/<token>/correct")
@claim_limit()
def correct_claim(token):
    """A mistyped TrxID, or the wrong method, entered again: the claim is replaced through the same
    matching.
    """
    payment = payment_or_404(token)
    if checkout_state(payment) != PAYMENT_PROCESSING or in_review(payment):
        return redirect(page_url(payment), 303)
    # Any enabled method of the brand: the customer may have picked the wrong one the first time.
    method = payment_methods.enabled_method(payment.brand, request.form.get("method_id"))
    form = ClaimForm(method=method)
    if (
        method is None or not method.has_number
    ):  # switched off meanwhile, not the brand's, no wallet
        form.validate()
        form.method_id.errors = [METHOD_GONE]
        return render_waiting_page(payment, form, status=422)
    if not form.validate():
        return render_waiting_page(payment, form, status=422, chosen=method)
    g.claim_attempted = (
        True  # counted like a first claim: corrections cannot be used to guess TrxIDs
    )
    if not reopen_claim(payment):  # settled, held or expired meanwhile
        db.session.rollback()
        return redirect(page_url(payment), 303)
    try:
        submit_claim(
            payment,
            method.provider,
            form.trx_id.data,
            sender_number=form.sender_number.data,
            fee=fee_for(method, payment.amount_bdt),
        )
    except DomainError as error:
        db.session.rollback()  # the old claim stands
        db.session.refresh(payment)
        if isinstance(error, InvalidState):
            return redirect(page_url(payment), 303)
        codes = [item.get("code") for item in error.errors or []]
        form.trx_id.errors = [CLAIM_REFUSALS.get(codes[0] if codes else None, CLAIM_REFUSALS[None])]
        return render_waiting_page(payment, form, status=http_status(error), chosen=method)
    if checkout_state(payment) == PAYMENT_COMPLETED:
        return redirect(completion_url(payment), 303)
    return redirect(waiting_url(payment), 303)


@bp.get("/<token>/status")
def status(token):
    """The small JSON the waiting page polls: {status, redirect_to}."""
    payment = find_payment(token)
    if payment is None:
        return jsonify(status="not_found", redirect_to=None), 404
    state = checkout_state(payment)
    redirect_to = None
    if state == PAYMENT_COMPLETED:
        redirect_to = completion_url(payment)
    elif state != PAYMENT_PROCESSING:
        redirect_to = page_url(payment)
    return jsonify(status=state, redirect_to=redirect_to)
