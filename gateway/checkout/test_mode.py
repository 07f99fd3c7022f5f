"""A test payment's checkout: buttons that act as the customer's phone would (test mode,
docs/testing-your-integration.md)."""

from flask import abort, redirect
from flask_wtf import FlaskForm
from wtforms import StringField
from wtforms.validators import AnyOf, DataRequired

from ..domain_errors import DomainError
from ..extensions import db
from ..states import PAYMENT_COMPLETED
from ..testmode.simulate import OUTCOMES, simulate_payment
from .pages import page_url
from .presenters import checkout_state
from .views import bp, completion_url, payment_or_404


class SimulateForm(FlaskForm):
    """The outcome a test payment's simulate button asks for; the CSRF token as every form."""

    outcome = StringField(validators=[DataRequired(), AnyOf(OUTCOMES)])


@bp.post("/<token>/simulate")
def simulate_outcome(token):
    """Simulate a test payment's outcome, then show where it went, as the real flow would."""
    payment = payment_or_404(token)
    if payment.livemode:
        abort(404)  # a live payment has no simulate button, and never takes a simulated SMS
    form = SimulateForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        simulate_payment(payment, form.outcome.data)
    except DomainError:  # another click or the sweep moved it first: the page shows where it is
        db.session.rollback()
        db.session.refresh(payment)
    if checkout_state(payment) == PAYMENT_COMPLETED:
        return redirect(completion_url(payment), 303)
    return redirect(page_url(payment), 303)
