"""The sidebar: sections and links, each shown only when its page exists and the user may open it.

Pages that other parts of the panel add later are listed already; a link appears as soon as its
endpoint is registered: panel.sms_inbox, panel.outbound_sms, panel.sms_templates, panel.devices,
panel.api_keys, panel.webhook_settings, panel.webhook_endpoints, panel.webhook_deliveries.
"""

from collections import namedtuple

from flask import current_app, request
from flask_login import current_user

from ..accounts.roles import (
    API_KEYS_MANAGE,
    AUDIT_LOG_VIEW,
    PAYMENTS_ACT,
    SECURITY_MANAGE,
    SETTINGS_MANAGE,
    USERS_MANAGE,
    VIEW,
    WEBHOOKS_MANAGE,
    can,
)
from ..i18n import lazy_gettext as _l

NavItem = namedtuple("NavItem", "endpoint label icon permission active_prefix")


def item(endpoint, label, icon, super_admin=False, active_prefix=None, permission=None):
    """One link, shown to roles with `permission` (`super_admin=True`: settings.manage, i.e. owners
    and admins).

    `active_prefix` marks it current on its detail pages too (panel.payment → panel.payment_*).
    """
    permission = permission or (SETTINGS_MANAGE if super_admin else VIEW)
    return NavItem(endpoint, label, icon, permission, active_prefix or endpoint)


NAVIGATION = (
    (_l("Overview"), (item("panel.dashboard", _l("Dashboard"), "grid"),)),
    (
        _l("Money"),
        (
            item("panel.counter", _l("Counter"), "till", permission=PAYMENTS_ACT),
            item("panel.payments", _l("Payments"), "card", active_prefix="panel.payment"),
            item("panel.refunds", _l("Refunds"), "undo"),
            item("panel.invoices", _l("Invoices"), "text", active_prefix="panel.invoice"),
            item("panel.customers", _l("Customers"), "people", active_prefix="panel.customer"),
            item("panel.links", _l("Payment links"), "link", active_prefix="panel.link"),
            item("panel.reports", _l("Reports"), "download", active_prefix="panel.report"),
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
                permission=API_KEYS_MANAGE,
                active_prefix="panel.api_key",
            ),
            item(
                "panel.webhook_settings", _l("Webhook settings"), "hook", permission=WEBHOOKS_MANAGE
            ),
            item(
                "panel.webhook_endpoints",
                _l("Webhook endpoints"),
                "hook",
                permission=WEBHOOKS_MANAGE,
                active_prefix="panel.webhook_endpoint",
            ),
            item(
                "panel.webhook_deliveries",
                _l("Webhook deliveries"),
                "list",
                active_prefix="panel.webhook_deliver",
            ),
            item("panel.plugins", _l("Plugins"), "hook", permission=API_KEYS_MANAGE),
        ),
    ),
    (
        _l("Administration"),
        (
            item(
                "panel.settings",
                _l("Settings"),
                "gear",
                permission=SETTINGS_MANAGE,
                active_prefix="panel.settings",
            ),
            item(
                "panel.security_settings",
                _l("Security"),
                "lock",
                permission=SECURITY_MANAGE,
            ),
            item(
                "panel.users",
                _l("Users"),
                "user",
                permission=USERS_MANAGE,
                active_prefix="panel.user",
            ),
            item(
                "panel.notifications",
                _l("Notifications"),
                "bell",
                permission=SETTINGS_MANAGE,
                active_prefix="panel.notification",
            ),
            item("panel.audit_log", _l("Audit log"), "clock", permission=AUDIT_LOG_VIEW),
        ),
    ),
)


def visible(entry):
    """Whether a link may be shown: its page is registered and the user's role opens it."""
    if entry.endpoint not in current_app.view_functions:
        return False
    return can(current_user, entry.permission)


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
