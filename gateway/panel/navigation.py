"""The sidebar: sections and links, each shown only when its page exists and the user may open it.

Pages that other parts of the panel add later are listed already; a link appears as soon as its
endpoint is registered: panel.sms_inbox, panel.outbound_sms, panel.sms_templates, panel.devices,
panel.api_keys, panel.webhook_settings, panel.webhook_deliveries.
"""

from collections import namedtuple

from flask import current_app, request
from flask_babel import lazy_gettext as _l
from flask_login import current_user

NavItem = namedtuple("NavItem", "endpoint label icon super_admin active_prefix")


def item(endpoint, label, icon, super_admin=False, active_prefix=None):
    """One link; `active_prefix` marks it current on its detail pages too (panel.payment → panel.payment_*)."""
    return NavItem(endpoint, label, icon, super_admin, active_prefix or endpoint)


NAVIGATION = (
    (_l("Overview"), (item("panel.dashboard", _l("Dashboard"), "grid"),)),
    (
        _l("Money"),
        (
            item("panel.payments", _l("Payments"), "card", active_prefix="panel.payment"),
            item("panel.refunds", _l("Refunds"), "undo"),
            item("panel.invoices", _l("Invoices"), "text", active_prefix="panel.invoice"),
            item("panel.customers", _l("Customers"), "people", active_prefix="panel.customer"),
        ),
    ),
    (
        _l("Phone & SMS"),
        (
            item("panel.devices", _l("Devices & pairing"), "phone", active_prefix="panel.device"),
            item("panel.sms_inbox", _l("SMS inbox"), "inbox", active_prefix="panel.sms_inbox"),
            item(
                "panel.outbound_sms", _l("Outbound SMS"), "send", active_prefix="panel.outbound_sms"
            ),
            item(
                "panel.sms_templates",
                _l("SMS templates"),
                "text",
                active_prefix="panel.sms_template",
            ),
        ),
    ),
    (
        _l("Developers"),
        (
            item(
                "panel.api_keys",
                _l("API keys"),
                "key",
                super_admin=True,
                active_prefix="panel.api_key",
            ),
            item("panel.webhook_settings", _l("Webhook settings"), "hook", super_admin=True),
            item(
                "panel.webhook_deliveries",
                _l("Webhook deliveries"),
                "list",
                active_prefix="panel.webhook_deliver",
            ),
        ),
    ),
    (
        _l("Administration"),
        (
            item(
                "panel.settings",
                _l("Settings"),
                "gear",
                super_admin=True,
                active_prefix="panel.settings",
            ),
            item("panel.users", _l("Users"), "user", super_admin=True, active_prefix="panel.user"),
            item("panel.audit_log", _l("Audit log"), "clock", super_admin=True),
        ),
    ),
)


def visible(entry):
    """Whether a link may be shown: its page is registered and the user's role opens it."""
    if entry.endpoint not in current_app.view_functions:
        return False
    return not entry.super_admin or current_user.is_super_admin


def is_current(entry):
    """Whether the page being shown belongs to this link."""
    endpoint = request.endpoint or ""
    return endpoint == entry.endpoint or endpoint.startswith(entry.active_prefix)


def nav_sections():
    """The sidebar for the signed-in user: (title, [(item, current)]) without empty sections."""
    sections = []
    for title, entries in NAVIGATION:
        links = [(entry, is_current(entry)) for entry in entries if visible(entry)]
        if links:
            sections.append((title, links))
    return sections
