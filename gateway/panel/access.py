"""Who may open which page: every panel route declares one permission (gateway/accounts/roles.py).

    @bp.get("/payments")
    @requires(VIEW)
    def payments(): ...

`requires` signs the visitor in first, sends a user whom the brand's policy obliges to enrol in
two-factor sign-in (in production) to the enrolment page, and answers 403 to a role without the
permission. `public` marks the few routes for signed-out visitors (sign-in and its second step).
`tests/panel/test_roles_routes.py` fails for any panel route with neither.
"""

from functools import wraps

from flask import abort, current_app, flash, redirect, session, url_for
from flask_babel import gettext as _
from flask_login import current_user, login_required

from ..accounts.roles import (  # noqa: F401 - re-exported: panel modules import permissions from here
    ACCOUNT,
    API_KEYS_MANAGE,
    AUDIT_LOG_VIEW,
    CUSTOMERS_DELETE,
    CUSTOMERS_EDIT,
    DEVICES_PAIR,
    DEVICES_REVOKE,
    INVOICES_MANAGE,
    LINKS_MANAGE,
    OUTBOUND_SMS_SEND,
    OWNERS_MANAGE,
    PAYMENTS_ACT,
    REFUNDS_CREATE,
    SECURITY_MANAGE,
    SETTINGS_MANAGE,
    SMS_ACT,
    SMS_TEMPLATES_MANAGE,
    USERS_MANAGE,
    VIEW,
    WEBHOOKS_MANAGE,
    WEBHOOKS_REDELIVER,
    can,
    refund_limit,
    requires_two_factor,
)
from . import bp

PUBLIC = "public"


def must_enrol(user):
    """Whether the brand's two-factor policy holds this user back until they enrol (production
    only).
    """
    return (
        current_app.config.get("APP_ENV") == "production"
        and requires_two_factor(user)
        and not user.two_factor_enabled
    )


def requires(permission):
    """The route needs a signed-in user whose role grants `permission`; others get 403."""
    can(None, permission)  # an unknown permission fails at import, not at the first request

    def decorate(view):
        @wraps(view)
        def guarded(*args, **kwargs):
            if permission != ACCOUNT and must_enrol(current_user):
                flash(_("Your brand requires two-factor sign-in. Set it up to continue."), "info")
                return redirect(url_for("panel.two_factor"))
            if not can(current_user, permission):
                abort(403)
            return view(*args, **kwargs)

        checked = login_required(guarded)
        checked.required_permission = permission
        return checked

    return decorate


def public(view):
    """A route for signed-out visitors (sign-in); declared so the route table test sees it
    chosen."""
    view.required_permission = PUBLIC
    return view


def current_brand():
    """The brand every panel query is scoped to: the signed-in user's own."""
    return current_user.brand


# The session's key: True while the signed-in user views test data (panel/test_mode.py, the switch).
TEST_MODE = "test_mode"


def panel_livemode():
    """The mode every panel list, page and figure shows: live (True) unless the user switched to
    "Viewing test data" (panel/test_mode.py), which is kept in their session.

    The one place the panel chooses between live and test objects (issue 31): every panel query
    takes its mode from it.
    """
    return not session.get(TEST_MODE)


@bp.app_template_global("can")
def can_in_template(permission):
    """`can('payments.act')` in templates: hide what the signed-in user may not do."""
    return can(current_user, permission)


@bp.app_template_global("my_refund_limit")
def my_refund_limit():
    """The largest refund the signed-in user may record: None (no limit), 0 (none) or an amount."""
    return refund_limit(current_user, current_user.brand)
