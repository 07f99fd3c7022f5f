"""Signing in and out of the panel, and changing one's own password."""

from urllib.parse import urlsplit

from flask import current_app, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user, login_user, logout_user

from ..accounts.models.brand import Brand
from ..accounts.users import authenticate, change_password, end_sessions, find_user_by_email
from ..answer_commit import unit_of_work
from ..checkout.theme import brand_theme
from ..clock import utcnow
from ..domain_errors import DomainError
from ..extensions import db
from ..rate_limits import limited
from . import bp, render_error
from .access import ACCOUNT, public, requires
from .audit import client_address, record_audit
from .forms import ActionForm, PasswordForm, SignInForm, attach_error


def sign_in_limit():
    """Failed attempts allowed per address, and apart from that per e-mail (LOGIN_RATE_LIMIT, e.g.
    10/minute).
    """
    return current_app.config["LOGIN_RATE_LIMIT"]


def sign_in_address_bucket():
    """Failed attempts from one client address, whatever e-mails they try (spraying many is limited
    too).
    """
    return f"sign-in-address:{client_address()}"


def sign_in_email_bucket():
    """Failed attempts at one e-mail, from whatever addresses (guessing from many is limited
    too)."""
    return f"sign-in-email:{(request.form.get('email') or '').strip().lower()}"


def failed_attempt(response):
    """Only failed attempts count against the limit; a successful sign-in redirects."""
    return response.status_code != 302


def safe_next(target):
    """The page to return to after sign-in: a path inside the panel, never another site."""
    if not target:
        return None
    parts = urlsplit(target)
    if (
        parts.scheme
        or parts.netloc
        or not parts.path.startswith("/panel/")
        or target.startswith("//")
    ):
        return None
    return target


def reset_session():
    """Empty the session (an old one is never carried into a new sign-in), keeping the language
    choice.
    """
    language = session.get("lang")
    session.clear()
    if language:
        session["lang"] = language


@bp.route("/sign-in", methods=["GET", "POST"])
@public
@limited(
    sign_in_limit, sign_in_address_bucket, scope="sign-in", methods=["POST"], counts=failed_attempt
)
@limited(
    sign_in_limit, sign_in_email_bucket, scope="sign-in", methods=["POST"], counts=failed_attempt
)
def sign_in():
    """The sign-in form; on success, the page asked for or the dashboard."""
    if current_user.is_authenticated:
        return redirect(url_for("panel.dashboard"))
    form = SignInForm()
    if form.validate_on_submit():
        # The sign-in time and the audit row (success or failure) commit together, before the
        # session names the user: a failed commit signs nobody in.
        with unit_of_work():
            user = authenticate(form.email.data, form.password.data)
            if user is None:
                known = find_user_by_email(form.email.data)
                if known is not None:
                    record_audit(None, "sign_in.failed", known, brand_id=known.brand_id)
            elif not user.two_factor_enabled:
                record_audit(user, "sign_in")
        if user is not None:
            if user.two_factor_enabled:
                return ask_for_second_factor(user, request.args.get("next"))
            return complete_sign_in(user, request.args.get("next"))
        form.password.errors = [_("The e-mail or password is not correct.")]
    return render_sign_in(form)


# Two-factor sign-in: after the password, the session names the user as pending (not signed in) for
# this long; gateway/panel/two_factor.py asks for the code and only then calls complete_sign_in.
PENDING_SIGN_IN = "two_factor_pending"
PENDING_SECONDS = 300


def ask_for_second_factor(user, next_page):
    """Remember who gave the right password, without signing them in, and ask for their code."""
    reset_session()
    session[PENDING_SIGN_IN] = {
        "user": user.get_id(),
        "next": safe_next(next_page),
        "until": int(utcnow().timestamp()) + PENDING_SECONDS,
    }
    return redirect(url_for("panel.two_factor_sign_in"))


def complete_sign_in(user, next_page):
    """Sign the user in on a fresh session and open the page asked for or the dashboard.

    Called once the sign-in and its audit row are committed.
    """
    reset_session()
    login_user(user)
    return redirect(safe_next(next_page) or url_for("panel.dashboard"))


def render_sign_in(form, status=200, limited=None):
    """The sign-in page in the deployment's name and colours (its first brand)."""
    brand = db.session.execute(db.select(Brand).order_by(Brand.id).limit(1)).scalar_one_or_none()
    return render_template(
        "panel/sign_in.html", form=form, limited=limited, brand=brand, theme=brand_theme(brand)
    ), status


@bp.errorhandler(429)
def too_many_attempts(error):
    """Past a limit: on sign-in, the form again saying when to retry; elsewhere, the panel's error
    page.
    """
    message = _("Too many attempts. Wait a minute, then try again.")
    if request.endpoint == "panel.sign_in":
        return render_sign_in(SignInForm(formdata=None), 429, message)
    return render_error(429, message)


@bp.post("/sign-out")
@requires(ACCOUNT)
def sign_out():
    """End the session on the server too (the button carries a CSRF token so no other site can sign
    you out).
    """
    if ActionForm().validate_on_submit():
        with unit_of_work():
            # A new session version: this cookie, and any copy of it, no longer names the user.
            end_sessions(current_user)
            record_audit(current_user, "sign_out")
        logout_user()
        reset_session()
        flash(_("You are signed out."), "info")
    return redirect(url_for("panel.sign_in"))


@bp.route("/account/password", methods=["GET", "POST"])
@requires(ACCOUNT)
def password():
    """Change one's own password after giving the current one."""
    form = PasswordForm()
    if form.validate_on_submit():
        try:
            with unit_of_work():
                change_password(current_user, form.current_password.data, form.new_password.data)
                record_audit(current_user, "password.change", current_user)
        except DomainError as error:
            attach_error(form, error)
        else:
            # The new password ends every other session; this one carries on under the new stamp.
            login_user(current_user._get_current_object(), fresh=True)
            flash(_("Your password is changed."), "success")
            return redirect(url_for("panel.dashboard"))
    return render_template("panel/password.html", form=form), 422 if form.errors else 200
