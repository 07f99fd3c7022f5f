"""Two-factor sign-in in the panel: the code step after the password, and enrolling, disabling, new
recovery codes.

The code step is a page of its own for a visitor who is NOT signed in: the session only names them
as pending (gateway/panel/auth.py:ask_for_second_factor), so no other panel address opens until the
code passes. Code attempts are limited per user (TWO_FACTOR_RATE_LIMIT: per minute, hour and day) in
the shared rate-limit store, so changing address does not buy more guesses.
"""

from flask import current_app, g, redirect, render_template, session, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.models.user import User
from ..accounts.two_factor import (
    confirm_enrolment,
    disable_two_factor,
    pending_secret,
    provisioning_uri,
    qr_data_uri,
    recovery_codes_left,
    regenerate_recovery_codes,
    start_enrolment,
    verify_second_factor,
)
from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import DomainError
from ..errors import http_status
from ..rate_limits import limited
from . import bp
from .access import ACCOUNT, public, requires
from .audit import record_audit
from .auth import PENDING_SIGN_IN, complete_sign_in, render_sign_in, reset_session
from .forms import ActionForm, SignInForm, attach_error
from .forms_security import CodeForm, ConfirmEnrolmentForm, PasswordAndCodeForm


def code_limit():
    """Wrong codes allowed per user (TWO_FACTOR_RATE_LIMIT, e.g. 10/minute;30/hour;100/day)."""
    return current_app.config["TWO_FACTOR_RATE_LIMIT"]


def pending_user():
    """The user who gave the right password and has not yet given a code, while that is recent; else
    None.
    """
    pending = session.get(PENDING_SIGN_IN)
    if not isinstance(pending, dict) or pending.get("until", 0) < utcnow().timestamp():
        return None
    user = User.from_session_id(pending.get("user", ""))
    return user if user is not None and user.two_factor_enabled else None


def code_bucket():
    """Attempts are counted per user (signed in, or pending at the code step), never per address."""
    if current_user.is_authenticated:
        return f"two-factor:{current_user.id}"
    user = pending_user()
    return f"two-factor:{user.id if user else 'none'}"


def code_refused(response):
    """Only refused codes (or passwords) count against the limit."""
    return bool(g.get("code_refused"))


def limit_codes(scope):
    """Refused codes limited per user on one route (each route its own budget, as before)."""
    return limited(code_limit, code_bucket, scope=scope, methods=["POST"], counts=code_refused)


@bp.route("/sign-in/two-factor", methods=["GET", "POST"])
@public
@limit_codes("two-factor-sign-in")
def two_factor_sign_in():
    """The second step of signing in: the code from the app, or a recovery code."""
    user = pending_user()
    if current_user.is_authenticated:
        return redirect(url_for("panel.dashboard"))
    if user is None:
        reset_session()
        form = SignInForm(formdata=None)
        return render_sign_in(form, 200, _("Sign in again: the code was not given in time."))
    form = CodeForm()
    if form.validate_on_submit():
        # The spent code and the audit row (success or failure) commit together, before the
        # session names the user: a failed commit signs nobody in and spends no code.
        with unit_of_work():
            kind = verify_second_factor(user, form.code.data)
            if kind is None:
                record_audit(None, "sign_in.two_factor_failed", user, brand_id=user.brand_id)
            else:
                record_audit(user, "sign_in", details={"second_factor": kind})
        if kind is not None:
            next_page = session.get(PENDING_SIGN_IN, {}).get("next")
            return complete_sign_in(user, next_page)
        g.code_refused = True
        form.code.errors = [_("The code is not correct, or was used already.")]
    return render_template("panel/two_factor_sign_in.html", form=form)


def render_account(**context):
    """The two-factor page of one's account, in whichever state it is."""
    user = current_user._get_current_object()
    context.setdefault("status", 200)
    return render_template(
        "panel/two_factor.html",
        enabled=user.two_factor_enabled,
        codes_left=recovery_codes_left(user) if user.two_factor_enabled else 0,
        change_form=context.pop("change_form", None) or PasswordAndCodeForm(formdata=None),
        **context,
    ), context["status"]


def render_enrolment(secret, form=None, status=200):
    """The QR code and the secret (only while enrolling), and the form for the first code."""
    uri = provisioning_uri(current_user, secret)
    return render_account(
        secret=secret,
        qr=qr_data_uri(uri),
        confirm_form=form or ConfirmEnrolmentForm(formdata=None),
        status=status,
    )


@bp.get("/account/two-factor")
@requires(ACCOUNT)
def two_factor():
    """Whether two-factor sign-in is on, and how to turn it on or off."""
    return render_account()


@bp.post("/account/two-factor/enrol")
@requires(ACCOUNT)
def two_factor_enrol():
    """A new secret to scan; rendered, not redirected, so it lives in no URL."""
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.two_factor"))
    try:
        with unit_of_work():
            secret = start_enrolment(current_user)
    except DomainError as error:
        return render_account(message=error.message, status=http_status(error))
    return render_enrolment(secret)


@bp.post("/account/two-factor/confirm")
@requires(ACCOUNT)
@limit_codes("two-factor-confirm")
def two_factor_confirm():
    """Turn two-factor on with a first code; the recovery codes are shown this once."""
    form = ConfirmEnrolmentForm()
    secret = pending_secret(current_user)
    if secret is None:
        return redirect(url_for("panel.two_factor"))
    if not form.validate_on_submit():
        return render_enrolment(secret, form, 422)
    try:
        with unit_of_work():
            codes = confirm_enrolment(current_user, form.code.data)
            record_audit(current_user, "two_factor.enable", current_user)
    except DomainError as error:
        g.code_refused = True
        attach_error(form, error)
        return render_enrolment(secret, form, http_status(error))
    return render_account(recovery_codes=codes, just_enabled=True)


@bp.post("/account/two-factor/disable")
@requires(ACCOUNT)
@limit_codes("two-factor-disable")
def two_factor_disable():
    """Turn two-factor off after the password and a code."""
    return change_two_factor(disable_two_factor, "two_factor.disable")


@bp.post("/account/two-factor/recovery-codes")
@requires(ACCOUNT)
@limit_codes("two-factor-recovery-codes")
def two_factor_recovery_codes():
    """Ten new recovery codes after the password and a code; the old ones stop working."""
    return change_two_factor(regenerate_recovery_codes, "two_factor.recovery_codes")


def change_two_factor(change, action):
    """Run a change that needs the password and a code; show the new codes when it makes some."""
    form = PasswordAndCodeForm()
    if not current_user.two_factor_enabled:
        return redirect(url_for("panel.two_factor"))
    if not form.validate_on_submit():
        return render_account(change_form=form, status=422)
    try:
        with unit_of_work():
            result = change(current_user, form.password.data, form.code.data)
            record_audit(current_user, action, current_user)
    except DomainError as error:
        g.code_refused = True
        attach_error(form, error)
        return render_account(change_form=form, status=http_status(error))
    if isinstance(result, list):
        return render_account(recovery_codes=result)
    return render_account(message=_("Two-factor sign-in is off."), message_kind="success")
