"""Users (super-administrators): invite staff with a one-time password, deactivate and reactivate."""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.users import get_user, invite_user, list_users, set_user_active
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from . import bp
from .access import current_brand, super_admin_required
from .audit import record_audit
from .forms import ActionForm, InviteForm, attach_error


def render_users(form=None, status=200, invited=None, password=None):
    """The users page; right after an invitation it shows the temporary password, once."""
    return render_template(
        "panel/users.html",
        users=list_users(current_brand()),
        form=form or InviteForm(formdata=None),
        invited=invited,
        password=password,
    ), status


@bp.get("/users")
@super_admin_required
def users():
    """Everyone who can sign in to this brand's panel."""
    return render_users()


@bp.post("/users")
@super_admin_required
def user_invite():
    """Create a user with a temporary password to hand over in person (no e-mail is sent)."""
    form = InviteForm()
    if not form.validate_on_submit():
        return render_users(form, 422)
    try:
        with unit_of_work():
            user, password = invite_user(
                current_brand(), form.email.data, form.name.data, form.role.data
            )
            record_audit(current_user, "user.invite", user, {"role": user.role})
    except DomainError as error:
        attach_error(form, error)
        return render_users(form, http_status(error))
    # Rendered, not redirected: the password must not survive in a session or a URL.
    return render_users(invited=user, password=password)


@bp.post("/users/<int:user_id>/deactivate")
@super_admin_required
def user_deactivate(user_id):
    """Stop a user signing in; an open session ends on their next request."""
    return change_activity(user_id, False)


@bp.post("/users/<int:user_id>/reactivate")
@super_admin_required
def user_reactivate(user_id):
    """Let a deactivated user sign in again."""
    return change_activity(user_id, True)


def change_activity(user_id, active):
    """Deactivate or reactivate one of the brand's users and log it."""
    user = get_user(current_brand(), user_id)
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                set_user_active(user, active, current_user)
                record_audit(current_user, "user.reactivate" if active else "user.deactivate", user)
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(
                _("%(email)s can sign in again.", email=user.email)
                if active
                else _("%(email)s is deactivated.", email=user.email),
                "success",
            )
    return redirect(url_for("panel.users"))
