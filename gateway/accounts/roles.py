"""Who may do what in the panel: the one table of roles and their permissions, and `can(user,
permission)`.

Every panel route declares one permission with `gateway/panel/access.py:requires`; a new route
picks one of these (or adds one here) and `tests/panel/test_roles_routes.py` fails until it does.

| Role | Can |
|---|---|
| owner | everything, including other owners, the two-factor policy and the staff refund limit |
| admin | everything except managing owners and the brand's security policy (deleting the
  brand's test data included) |
| staff | read pages; act on payments, the SMS inbox and outbound SMS; edit and delete customers;
  revoke a phone; redeliver a webhook; refunds up to the brand's staff refund limit, counted over
  all their refunds of a payment (none by default) |
| viewer | read pages only |
"""

from decimal import Decimal

ROLES = ("owner", "admin", "staff", "viewer")
# Roles that hold the keys (the API's X-Super-Admin-Email, `User.is_super_admin`).
ADMIN_ROLES = ("owner", "admin")
# Accepted when a user is created (older code, CLI flags, stored rows before revision 0007).
LEGACY_ROLES = {"super_admin": "owner"}

# Pages that only show things: every role.
VIEW = "view"
# One's own password and two-factor sign-in: every role.
ACCOUNT = "account"
PAYMENTS_ACT = "payments.act"  # cancel, approve or reject a review, settle late money
REFUNDS_CREATE = "refunds.create"  # staff only up to Brand.staff_refund_limit
CUSTOMERS_EDIT = "customers.edit"
CUSTOMERS_DELETE = "customers.delete"
SMS_ACT = "sms.act"  # match or ignore an inbox message
OUTBOUND_SMS_SEND = "outbound_sms.send"
LINKS_MANAGE = "links.manage"  # create, edit, disable and enable payment links
INVOICES_MANAGE = "invoices.manage"  # write, send and void invoices
SMS_TEMPLATES_MANAGE = "sms_templates.manage"
DEVICES_PAIR = "devices.pair"  # make a pairing code, add a forwarding phone
DEVICES_REVOKE = "devices.revoke"  # unpair a lost or stolen phone at once
API_KEYS_MANAGE = "api_keys.manage"
WEBHOOKS_MANAGE = "webhooks.manage"  # URL, secret, test
WEBHOOKS_REDELIVER = "webhooks.redeliver"  # send a failed delivery again
SETTINGS_MANAGE = "settings.manage"
USERS_MANAGE = "users.manage"
AUDIT_LOG_VIEW = "audit_log.view"
OWNERS_MANAGE = "owners.manage"  # create, promote, demote or deactivate an owner
SECURITY_MANAGE = "security.manage"  # the two-factor policy and the staff refund limit
TEST_DATA_DELETE = "test_data.delete"  # delete every test-mode object of the brand

READER = frozenset({VIEW, ACCOUNT})
STAFF = READER | {
    PAYMENTS_ACT,
    REFUNDS_CREATE,
    CUSTOMERS_EDIT,
    CUSTOMERS_DELETE,
    SMS_ACT,
    OUTBOUND_SMS_SEND,
    LINKS_MANAGE,
    INVOICES_MANAGE,
    DEVICES_REVOKE,
    WEBHOOKS_REDELIVER,
}
ADMIN = STAFF | {
    SMS_TEMPLATES_MANAGE,
    DEVICES_PAIR,
    API_KEYS_MANAGE,
    WEBHOOKS_MANAGE,
    SETTINGS_MANAGE,
    USERS_MANAGE,
    AUDIT_LOG_VIEW,
    TEST_DATA_DELETE,
}
OWNER = ADMIN | {OWNERS_MANAGE, SECURITY_MANAGE}

PERMISSIONS = {"owner": OWNER, "admin": ADMIN, "staff": STAFF, "viewer": READER}
ALL_PERMISSIONS = frozenset(OWNER)


def can(user, permission):
    """Whether a signed-in, active user's role grants a permission (unknown roles grant nothing)."""
    if permission not in ALL_PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}")
    if user is None or not getattr(user, "is_authenticated", False) or not user.active:
        return False
    return permission in PERMISSIONS.get(user.role, frozenset())


def refund_limit(user, brand):
    """The most this user may refund of one payment in total (None: no limit); staff are held to
    the brand's limit.

    The brand's staff_refund_limit is None by default (staff refund any amount, as before roles
    existed); an owner sets 0 to stop staff refunding, or an amount to cap what each staff member
    refunds of a payment, all their refunds of it together (payments/refunds.py guards the sum).
    """
    if not can(user, REFUNDS_CREATE):
        return Decimal(0)
    if user.role in ADMIN_ROLES:
        return None
    return brand.staff_refund_limit


def may_refund(user, brand, amount):
    """Whether the user may have refunded this much of one payment in total (Decimal: what they
    refunded of it already plus the new refund)."""
    limit = refund_limit(user, brand)
    return limit is None or (limit > 0 and amount <= limit)


def assignable_roles(acting_user):
    """The roles the acting user may give: an admin cannot make owners."""
    if can(acting_user, OWNERS_MANAGE):
        return ROLES
    if can(acting_user, USERS_MANAGE):
        return tuple(role for role in ROLES if role != "owner")
    return ()


def may_manage(acting_user, user):
    """Whether the acting user may change this user's role or activity: only owners touch owners."""
    if not can(acting_user, USERS_MANAGE):
        return False
    return user.role != "owner" or can(acting_user, OWNERS_MANAGE)


def requires_two_factor(user):
    """Whether the brand's policy makes this user enrol before using the panel (owners and
    admins)."""
    return bool(user.brand.require_two_factor) and user.role in ADMIN_ROLES
