"""The checkout's wallet API methods (bKash, Nagad): the button that sends the customer to the
wallet's page, and the callback they come back to (docs/wallet-apis.md)."""

from flask import current_app, redirect, request
from flask_wtf import FlaskForm

from ..domain_errors import DomainError, InvalidState
from ..errors import http_status
from ..i18n import gettext as _
from ..payments import methods as payment_methods
from ..payments.lifecycle import checkout_url
from ..payments.methods import PROVIDER_NAMES
from ..states import PAYMENT_COMPLETED, PAYMENT_CREATED
from ..wallets import (
    CANCELLED,
    PAID,
    PENDING,
    UNAPPLIED,
    finish_wallet_payment,
    start_wallet_payment,
)
from .pages import page_url, render_checkout
from .presenters import checkout_state
from .views import bp, completion_url, payment_or_404, render_pay_page


def callback_url(payment):
    """Where the wallet sends the customer back: our callback, on the payment's own origin (its
    checkout_url's)."""
    return checkout_url(payment) + "/wallet/return"


@bp.post("/<token>/wallet/<int:method_id>")
def start_wallet(token, method_id):
    """The customer chose a wallet's API method: start a payment there and send them to its page."""
    payment = payment_or_404(token)
    if checkout_state(payment) != PAYMENT_CREATED:
        return redirect(page_url(payment), 303)
    if not FlaskForm().validate_on_submit():
        return render_pay_page(
            payment,
            chosen=method_id,
            status=400,
            wallet_notice=_("The form expired; please try again."),
        )
    method = payment_methods.enabled_method(payment.brand, method_id)
    if method is None or not method.is_wallet_api:
        return render_pay_page(
            payment,
            status=422,
            wallet_notice=_("That way to pay is no longer offered; please choose another."),
        )
    try:
        wallet_page = start_wallet_payment(payment, method, callback_url(payment))
    except DomainError as error:
        if isinstance(error, InvalidState) and error.code == "INVALID_STATE":
            return redirect(page_url(payment), 303)
        current_app.logger.warning(
            "wallet start refused for payment %s: %s", payment.id, error.message
        )
        return render_pay_page(
            payment,
            chosen=method.id,
            status=http_status(error) if http_status(error) < 500 else 502,
            wallet_notice=_(
                "%(provider)s could not start the payment: %(reason)s",
                provider=PROVIDER_NAMES[method.provider],
                reason=error.message,
            ),
        )
    # A page of ours that forwards, not a 303: the pay page's CSP keeps form-action to 'self' (and
    # the shop's return addresses), and a browser holds a form's redirects to it.
    response = render_checkout(
        "checkout/wallet_redirect.html", payment, 200, method=method, wallet_url=wallet_page
    )
    return response


@bp.get("/<token>/wallet/return")
def wallet_return(token):
    """The wallet sent the customer back: ask the wallet ourselves, then the result or the pay page
    with the reason."""
    payment = payment_or_404(token)
    try:
        outcome = finish_wallet_payment(payment, request.args.to_dict())
    except DomainError as error:
        # Unknown (a timeout, the wallet down): the periodic settle asks the wallet later.
        current_app.logger.warning(
            "wallet finish failed for payment %s: %s", payment.id, error.message
        )
        outcome = None
    state = checkout_state(payment)
    if state == PAYMENT_COMPLETED:
        return redirect(completion_url(payment), 303)
    if state != PAYMENT_CREATED:
        return redirect(page_url(payment), 303)
    if outcome is None or outcome.status in (PAID, PENDING):
        notice = _(
            "The wallet has not confirmed your payment yet. Do not pay again: we are checking "
            "with it, and this page will show the result when you reload it in a minute."
        )
    elif outcome.status == CANCELLED:
        notice = _("You cancelled the payment in the wallet.")
    elif outcome.status == UNAPPLIED:
        notice = _(
            "The wallet took your money, but it could not pay this payment (%(reason)s). The shop "
            "has been told and will return it to you.",
            reason=outcome.reason or "",
        )
    else:
        notice = _("The wallet did not take the payment: %(reason)s", reason=outcome.reason or "")
    return render_pay_page(payment, chosen=None, status=200, wallet_notice=notice)
