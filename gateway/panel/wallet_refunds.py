"""A wallet refund left pending (the wallet did not answer in time): shown on the payment's page,
where the merchant who looked in the wallet's portal says whether it was made (audited)."""

from flask import flash, redirect, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..domain_errors import DomainError
from ..extensions import db
from ..payments.lifecycle import get_payment
from ..wallets.models import WalletRefund
from ..wallets.refunds import (
    asks_refund_status,
    pending_refund,
    provider_name,
    resolve_by_hand,
    still_sending,
    trip_of,
)
from . import bp
from .access import REFUNDS_CREATE, current_brand, panel_livemode, requires
from .formatting import money
from .forms import WalletRefundForm


def pending_wallet_refund(payment):
    """What the payment page shows of its pending wallet refund (None without one, or while the
    request that sent it may still get its answer)."""
    attempt = pending_refund(payment.id)
    if attempt is None or still_sending(attempt):
        return None
    provider = trip_of(attempt).provider
    return {
        "attempt": attempt,
        "wallet": provider_name(provider),
        "checked": asks_refund_status(provider),
        "form": WalletRefundForm(formdata=None),
    }


def to_payment(payment):
    """The payment's detail page."""
    return redirect(url_for("panel.payment_detail", payment_id=payment.public_id))


@bp.post("/payments/<payment_id>/wallet-refunds/<int:attempt_id>/<any(made, not_made):outcome>")
@requires(REFUNDS_CREATE)
def settle_wallet_refund(payment_id, attempt_id, outcome):
    """The merchant says whether the pending wallet refund was made: recorded as a refund, or
    closed so the payment can be refunded again."""
    payment = get_payment(current_brand(), payment_id, panel_livemode())
    attempt = db.session.get(WalletRefund, attempt_id)
    form = WalletRefundForm()
    if attempt is None or attempt.payment_id != payment.id or not form.validate_on_submit():
        flash(_("That refund could not be settled: reload the page and try again."), "error")
        return to_payment(payment)
    made = outcome == "made"
    try:
        resolve_by_hand(attempt, made, current_user, form.reference.data or None)
    except DomainError as error:
        flash(error.message, "error")
        return to_payment(payment)
    if made:
        flash(_("Refunded %(amount)s.", amount=money(attempt.amount, payment.currency)), "success")
    else:
        flash(_("Closed: the refund was not made. You can refund the payment again."), "success")
    return to_payment(payment)
