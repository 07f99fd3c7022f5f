"""Money that did not apply: what customers paid through a wallet's API that did not pay their
payment, listed for the merchant to return through the wallet or mark handled; audited."""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.roles import may_refund
from ..answer_commit import unit_of_work
from ..api.paging import paginate
from ..domain_errors import DomainError
from ..money import format_amount
from ..wallets.unapplied import (
    mark_handled,
    return_unapplied,
    returned_amount,
    unapplied_query,
    unapplied_trip,
)
from . import bp
from .access import REFUNDS_CREATE, VIEW, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm
from .payments import PER_PAGE, page_number

# What the wallet is told a return is for (bKash needs a reason).
RETURN_REASON = "Paid, but did not pay the order"


@bp.get("/payments/unapplied")
@requires(VIEW)
def payments_unapplied():
    """The brand's wallet money that did not apply, newest first."""
    rows, meta = paginate(
        unapplied_query(current_brand(), panel_livemode()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    return render_template("panel/payments_unapplied.html", rows=rows, meta=meta)


def audit_details(trip):
    """What the audit log keeps of an unapplied trip acted on."""
    return {
        "provider": trip.provider,
        "trx_id": trip.provider_trx_id,
        "amount": format_amount(returned_amount(trip)) if returned_amount(trip) else None,
        "reason": trip.last_error,
    }


def back_to(payment):
    """The payment's page, where the notice says what is left."""
    return redirect(url_for("panel.payment_detail", payment_id=payment.public_id))


@bp.post("/payments/unapplied/<int:trip_id>/refund")
@requires(REFUNDS_CREATE)
def unapplied_refund(trip_id):
    """Return an unapplied trip's money through its wallet (the wallet's refund)."""
    trip, payment = unapplied_trip(current_brand(), trip_id, panel_livemode())
    if not ActionForm().validate_on_submit():
        return back_to(payment)
    amount = returned_amount(trip)
    if amount is not None and not may_refund(current_user, current_brand(), amount):
        flash(_("Your role cannot refund this much. Ask an owner or an admin."), "error")
        return back_to(payment)
    try:
        with unit_of_work():
            refund_id = return_unapplied(trip, payment, RETURN_REASON)
            record_audit(
                current_user,
                "payment.wallet_return",
                payment,
                {**audit_details(trip), "refund_id": refund_id},
            )
    except DomainError as error:
        flash(error.message, "error")
    else:
        flash(_("Returned through the wallet: %(refund_id)s.", refund_id=refund_id), "success")
    return back_to(payment)


@bp.post("/payments/unapplied/<int:trip_id>/handled")
@requires(REFUNDS_CREATE)
def unapplied_handled(trip_id):
    """The merchant dealt with the money outside the gateway: off the list."""
    trip, payment = unapplied_trip(current_brand(), trip_id, panel_livemode())
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                mark_handled(trip)
                record_audit(current_user, "payment.wallet_handled", payment, audit_details(trip))
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(_("Marked handled."), "success")
    return back_to(payment)
