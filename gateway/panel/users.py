"""Users (owners and admins): invite people with a role and a one-time password, change roles,
deactivate.

An admin cannot make, change or deactivate an owner; the last active owner cannot be demoted or
deactivated; every change ends the user's sessions (gateway/accounts/users.py).
"""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..accounts.roles import assignable_roles, may_manage
from ..accounts.users import change_role, get_user, invite_user, list_users, set_user_active
from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from . import bp
from .access import USERS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import ActionForm, InviteForm, attach_error
from .forms_security import ROLE_NAMES, RoleForm, role_choices


@bp.app_template_global("role_name")
def role_name(role):
    """A role as people read it (Owner, Admin, Staff, Viewer)."""
    return ROLE_NAMES.get(role, role)


def invite_form(submitted=True):
    """The invitation form (blank unless submitted) offering only the roles the signed-in user may
    give.
    """
    form = InviteForm() if submitted else InviteForm(formdata=None)
    form.role.choices = role_choices(assignable_roles(current_user))
    return form


def render_users(form=None, status=200, invited=None, password=None):
    """The users page; right after an invitation it shows the temporary password, once."""
    roles = role_choices(assignable_roles(current_user))
    return render_template(
        "panel/users.html",
        users=list_users(current_brand()),
        form=form or invite_form(submitted=False),
        role_choices=roles,
        may_manage=lambda user: user.id != current_user.id and may_manage(current_user, user),
        invited=invited,
        password=password,
    ), status


@bp.get("/users")
@requires(USERS_MANAGE)
def users():
    """Everyone who can sign in to this brand's panel."""
    return render_users()


@bp.post("/users")
@requires(USERS_MANAGE)
def user_invite():
    """Create a user with a temporary password to hand over in person (no e-mail is sent)."""
    form = invite_form()
    if not form.validate_on_submit():
        return render_users(form, 422)
    try:
        with unit_of_work():
            user, password = invite_user(
                current_brand(), form.email.data, form.name.data, form.role.data, current_user
            )
            record_audit(current_user, "user.invite", user, {"role": user.role})
    except DomainError as error:
        attach_error(form, error)
        return render_users(form, http_status(error))
    # Rendered, not redirected: the password must not survive in a session or a URL.
    return render_users(invited=user, password=password)


@bp.post("/users/<int:user_id>/role")
@requires(USERS_MANAGE)
def user_role(user_id):
    """Give a user another role; their open sessions end."""
    user = get_user(current_brand(), user_id)
    form = RoleForm()
    if form.validate_on_submit():
        old = user.role
        try:
            with unit_of_work():
                change_role(user, form.role.data, current_user)
                record_audit(current_user, "user.role", user, {"role": [old, user.role]})
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(
                _("%(email)s is now: %(role)s.", email=user.email, role=role_name(user.role)),
                "success",
            )
    else:
        flash(_("Choose one of the roles offered."), "error")
    return redirect(url_for("panel.users"))


@bp.post("/users/<int:user_id>/deactivate")
@requires(USERS_MANAGE)
def user_deactivate(user_id):
    """Stop a user signing in; their open sessions end at once."""
    return change_activity(user_id, False)


@bp.post("/users/<int:user_id>/reactivate")
@requires(USERS_MANAGE)
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
