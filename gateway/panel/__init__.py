"""The merchant panel: server-rendered pages under /panel over the services the API uses."""

from urllib.parse import urlencode

from flask import Blueprint, current_app, render_template, request, url_for
from flask_login import current_user
from flask_wtf.csrf import CSRFError

from ..checkout.theme import brand_theme
from ..domain_errors import DomainError, NotFound
from ..errors import http_status
from ..extensions import login_manager
from ..i18n import LANGUAGE_NAMES
from ..i18n import lazy_gettext as _l
from .formatting import register_filters
from .navigation import nav_sections

bp = Blueprint("panel", __name__, url_prefix="/panel")
bp.record_once(register_filters)

# The panel's pages may show nothing but themselves: no framing, no third-party scripts.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
ERROR_MESSAGES = {
    400: _l("The form had expired or was sent twice. Go back, reload the page and try again."),
    403: _l("Your role does not open this page. Ask an owner or an admin."),
    404: _l("There is nothing here, or it belongs to another brand."),
}


def register_panel(app):
    """Attach the panel and make Flask-Login send signed-out visitors to its sign-in page."""
    # Each module adds its routes to the blueprint when imported.
    from . import (  # noqa: F401
        add_phone,
        audit_log,
        auth,
        counter,
        currencies,
        customers,
        dashboard,
        demo_notice,
        developers,
        developers_deliveries,
        developers_endpoints,
        developers_webhooks,
        devices,
        invoices,
        links,
        mail_settings,
        notifications,
        outbound_sms,
        payment_actions,
        payment_proofs,
        payments,
        plugins,
        refunds,
        reports,
        security,
        settings,
        sms_inbox,
        sms_templates,
        test_mode,
        two_factor,
        users,
        wallet_methods,
        wallet_refunds,
        wallet_unapplied,
    )

    login_manager.login_view = "panel.sign_in"
    login_manager.login_message = _l("Sign in to continue.")
    login_manager.login_message_category = "info"
    # A session cookie replayed from another address or browser is dropped.
    login_manager.session_protection = "strong"
    app.register_blueprint(bp)


def language_url(code):
    """This page in another language; a page answered to a form (a POST-only address) switches on
    the dashboard.
    """
    rule = request.url_rule
    if rule is None or "GET" not in rule.methods:
        return url_for("panel.dashboard", lang=code)
    # The query is kept as sent (every value of a repeated filter) and never read as url_for's own
    # options (`?_external=1&_scheme=x` would be), nor as the page's path arguments.
    query = request.args.copy()
    query["lang"] = code
    return (
        url_for(request.endpoint, **(request.view_args or {}))
        + "?"
        + urlencode(list(query.items(multi=True)))
    )


@bp.context_processor
def panel_context():
    """What the layout needs: the brand, its colours, the sidebar, the sign-out form, the language
    switch.
    """
    brand = current_user.brand if current_user.is_authenticated else None
    return {
        "brand": brand,
        "theme": brand_theme(brand),
        "language_names": LANGUAGE_NAMES,
        "language_url": language_url,
        "nav_sections": nav_sections if current_user.is_authenticated else list,
    }


@bp.after_request
def protect_pages(response):
    """No caching of merchant data, no foreign content (no framing is every answer's rule)."""
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers["Cache-Control"] = "no-store"
    return response


def render_error(status, message=None):
    """A failure page in the panel's layout."""
    return render_template(
        "panel/error.html", status=status, message=message or ERROR_MESSAGES.get(status)
    ), status


@bp.errorhandler(CSRFError)
def csrf_refused(error):
    """A form without a valid token changes nothing."""
    current_app.logger.info("panel form refused: %s", error.description)
    return render_error(400)


@bp.errorhandler(403)
def forbidden(error):
    """A page the user's role does not open."""
    return render_error(403)


@bp.errorhandler(404)
def missing(error):
    """Nothing at this address, or another brand's row."""
    return render_error(404)


@bp.errorhandler(DomainError)
def service_refused(error):
    """A service's refusal outside a form (e.g. another brand's payment): its status and message."""
    if isinstance(error, NotFound):
        return render_error(404)
    return render_error(http_status(error), error.message)
