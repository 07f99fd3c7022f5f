"""Who may open which page: signed-in staff everywhere, super-administrators alone on keys, users and settings."""

from functools import wraps

from flask import abort
from flask_login import current_user, login_required


def staff_required(view):
    """Any signed-in, active panel user (staff or super-administrator)."""
    return login_required(view)


def super_admin_required(view):
    """Only a super-administrator; staff get 403."""

    @wraps(view)
    def guarded(*args, **kwargs):
        if not current_user.is_super_admin:
            abort(403)
        return view(*args, **kwargs)

    return login_required(guarded)


def current_brand():
    """The brand every panel query is scoped to: the signed-in user's own."""
    return current_user.brand
