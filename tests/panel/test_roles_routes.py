"""Every panel route declares a permission, and each role gets exactly what the role table says,
route by route.

A forbidden request answers 403 and leaves every table as it was (no action, no audit row); an
allowed one is not refused. A new route fails `test_every_panel_route_declares_a_permission` until
it has `@requires(...)`, and `test_every_panel_route_is_in_the_table_below` until it is listed in
ROUTES.
"""

from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.accounts.api_keys import add_key
from gateway.accounts.models.brand import Brand
from gateway.accounts.models.user import User
from gateway.accounts.roles import ALL_PERMISSIONS, PERMISSIONS, ROLES
from gateway.clock import utcnow
from gateway.compat.keys import generate_compat_key
from gateway.devices.models.device import PairingCode
from gateway.extensions import db
from gateway.panel.access import PUBLIC
from gateway.payments.proofs import add_proof
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.templates import create_template
from gateway.wallets.models import WalletPayment, WalletRefund
from gateway.webhooks.endpoints import create_endpoint
from gateway.webhooks.models.event import Event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.conftest import empty_every_table
from tests.factories import (
    CustomerFactory,
    PaymentFactory,
    PaymentMethodFactory,
    UserFactory,
    bkash_text,
    completed_payment,
    forward_from,
    paired_device,
)
from tests.invoices.conftest import an_invoice
from tests.links.support import make_link
from tests.panel.conftest import csrf_token, panel_client, sign_in
from tests.proof_files import image_bytes

# Who may use each route: O owner, A admin, S staff, V viewer. (endpoint, method, path, form, roles)
ROUTES = [
    ("panel.dashboard", "GET", "/panel/dashboard", None, "OASV"),
    ("panel.counter", "GET", "/panel/counter", None, "OAS"),
    (
        "panel.counter_sale",
        "POST",
        "/panel/counter",
        {"amount": "450", "method_id": "{method}"},
        "OAS",
    ),
    ("panel.counter_sale_page", "GET", "/panel/counter/{open}", None, "OAS"),
    ("panel.counter_sale_status", "GET", "/panel/counter/{open}/status", None, "OAS"),
    ("panel.counter_receipt", "GET", "/panel/counter/{paid}/receipt", None, "OAS"),
    ("panel.payments", "GET", "/panel/payments", None, "OASV"),
    ("panel.payment_detail", "GET", "/panel/payments/{paid}", None, "OASV"),
    ("panel.payment_proof", "GET", "/panel/payments/{paid}/proof", None, "OASV"),
    ("panel.payments_unapplied", "GET", "/panel/payments/unapplied", None, "OASV"),
    ("panel.unapplied_refund", "POST", "/panel/payments/unapplied/{unapplied}/refund", {}, "OAS"),
    ("panel.unapplied_handled", "POST", "/panel/payments/unapplied/{unapplied}/handled", {}, "OAS"),
    (
        "panel.settle_wallet_refund",
        "POST",
        "/panel/payments/{paid}/wallet-refunds/{wallet_refund}/not_made",
        {},
        "OAS",
    ),
    ("panel.refunds", "GET", "/panel/refunds", None, "OASV"),
    ("panel.customers", "GET", "/panel/customers", None, "OASV"),
    ("panel.customer_detail", "GET", "/panel/customers/{customer}", None, "OASV"),
    ("panel.customer_edit", "GET", "/panel/customers/{customer}/edit", None, "OAS"),
    ("panel.customer_edit", "POST", "/panel/customers/{customer}/edit", {"name": "Renamed"}, "OAS"),
    ("panel.customer_delete", "POST", "/panel/customers/{customer}/delete", {}, "OAS"),
    ("panel.refund_payment", "POST", "/panel/payments/{paid}/refund", {"amount": "1"}, "OAS"),
    ("panel.cancel", "POST", "/panel/payments/{open}/cancel", {}, "OAS"),
    ("panel.approve", "POST", "/panel/payments/{review}/approve", {}, "OAS"),
    ("panel.reject", "POST", "/panel/payments/{review}/reject", {"reason": "No"}, "OAS"),
    ("panel.complete_late", "POST", "/panel/payments/{review}/late/complete", {}, "OAS"),
    ("panel.return_late", "POST", "/panel/payments/{review}/late/return", {}, "OAS"),
    ("panel.sms_inbox", "GET", "/panel/sms-inbox", None, "OASV"),
    ("panel.sms_inbox_message", "GET", "/panel/sms-inbox/{sms}", None, "OASV"),
    ("panel.sms_inbox_match", "POST", "/panel/sms-inbox/{sms}/match", {"payment": "x"}, "OAS"),
    ("panel.sms_inbox_ignore", "POST", "/panel/sms-inbox/{sms}/ignore", {}, "OAS"),
    ("panel.sms_templates", "GET", "/panel/sms-templates", None, "OASV"),
    ("panel.sms_template_test", "POST", "/panel/sms-templates/test", {"text": "x"}, "OASV"),
    (
        "panel.sms_template_create",
        "POST",
        "/panel/sms-templates",
        {
            "provider": "bkash",
            "name": "New",
            "pattern": r"Tk (?P<amount>[\d.]+) TrxID (?P<trx_id>\w+)",
        },
        "OA",
    ),
    ("panel.sms_template_toggle", "POST", "/panel/sms-templates/{template}/toggle", {}, "OA"),
    ("panel.sms_template_delete", "POST", "/panel/sms-templates/{template}/delete", {}, "OA"),
    ("panel.outbound_sms", "GET", "/panel/outbound-sms", None, "OASV"),
    (
        "panel.outbound_sms_queue",
        "POST",
        "/panel/outbound-sms",
        {"to": "+8801712345678", "body": "Hello"},
        "OAS",
    ),
    ("panel.outbound_sms_retry", "POST", "/panel/outbound-sms/{outbound}/retry", {}, "OAS"),
    ("panel.devices", "GET", "/panel/devices", None, "OASV"),
    ("panel.device_pairing_reopened", "GET", "/panel/devices/pairing", None, "OASV"),
    ("panel.device_pairing", "POST", "/panel/devices/pairing", {}, "OA"),
    ("panel.device_revoke", "POST", "/panel/devices/{device}/revoke", {}, "OAS"),
    ("panel.device_status", "GET", "/panel/devices/{device}/status", None, "OASV"),
    ("panel.pairing_status", "GET", "/panel/devices/pairing/{pairing_code}/status", None, "OASV"),
    ("panel.add_phone", "GET", "/panel/devices/add", None, "OA"),
    ("panel.add_phone_app", "GET", "/panel/devices/add/sms-to-url", None, "OA"),
    ("panel.add_forwarder", "POST", "/panel/devices/add/sms-to-url", {"label": "Spare"}, "OA"),
    ("panel.developers", "GET", "/panel/developers", None, "OA"),
    ("panel.api_keys", "GET", "/panel/developers/api-keys", None, "OA"),
    (
        "panel.api_key_generate",
        "POST",
        "/panel/developers/api-keys",
        {"label": "New key", "scopes": "read"},
        "OA",
    ),
    (
        "panel.api_key_revoke_confirm",
        "GET",
        "/panel/developers/api-keys/revoke?label=shop",
        None,
        "OA",
    ),
    ("panel.api_key_revoke", "POST", "/panel/developers/api-keys/revoke", {"label": "shop"}, "OA"),
    ("panel.webhook_settings", "GET", "/panel/developers/webhooks", None, "OA"),
    (
        "panel.webhook_settings_url",
        "POST",
        "/panel/developers/webhooks/url",
        {"webhook_url": "https://shop.example.com/hook"},
        "OA",
    ),
    ("panel.webhook_settings_secret", "POST", "/panel/developers/webhooks/secret", {}, "OA"),
    ("panel.webhook_settings_rotate", "POST", "/panel/developers/webhooks/secret/rotate", {}, "OA"),
    ("panel.webhook_settings_test", "POST", "/panel/developers/webhooks/test", {}, "OA"),
    ("panel.webhook_deliveries", "GET", "/panel/developers/webhook-deliveries", None, "OASV"),
    (
        "panel.webhook_delivery",
        "GET",
        "/panel/developers/webhook-deliveries/{delivery}",
        None,
        "OASV",
    ),
    (
        "panel.webhook_delivery_redeliver",
        "POST",
        "/panel/developers/webhook-deliveries/{delivery}/redeliver",
        {},
        "OAS",
    ),
    ("panel.webhook_endpoints", "GET", "/panel/developers/webhook-endpoints", None, "OA"),
    (
        "panel.webhook_endpoint_create",
        "POST",
        "/panel/developers/webhook-endpoints",
        {"url": "https://shop.example.com/h2", "enabled_events": "*", "mode": "live"},
        "OA",
    ),
    (
        "panel.webhook_endpoint_toggle",
        "POST",
        "/panel/developers/webhook-endpoints/{endpoint}/toggle",
        {},
        "OA",
    ),
    (
        "panel.webhook_endpoint_rotate",
        "POST",
        "/panel/developers/webhook-endpoints/{endpoint}/rotate",
        {},
        "OA",
    ),
    (
        "panel.webhook_endpoint_delete",
        "POST",
        "/panel/developers/webhook-endpoints/{endpoint}/delete",
        {},
        "OA",
    ),
    ("panel.event_redeliver", "POST", "/panel/developers/events/{event}/redeliver", {}, "OAS"),
    ("panel.settings", "GET", "/panel/settings", None, "OA"),
    (
        "panel.settings",
        "POST",
        "/panel/settings",
        {"name": "Renamed", "primary_color": "#123456", "timezone": "UTC", "currencies": "BDT"},
        "OA",
    ),
    (
        "panel.settings_method_add",
        "POST",
        "/panel/settings/methods",
        {"provider": "nagad", "number": "01811111111", "kind": "personal"},
        "OA",
    ),
    (
        "panel.settings_account_method_add",
        "POST",
        "/panel/settings/methods/account",
        {
            "account-kind": "manual",
            "account-proof": "optional",
            "account-display_name": "Cash deposit",
            "account-account_name": "Shop Ltd",
            "account-account_number": "ACC-1",
        },
        "OA",
    ),
    (
        "panel.settings_wallet_method_add",
        "POST",
        "/panel/settings/methods/wallet-api",
        {
            "wallet-provider": "bkash",
            "wallet-base_url": "https://tokenized.sandbox.bka.sh/v1.2.0-beta",
            "wallet-app_key": "key",
            "wallet-app_secret": "secret",
            "wallet-username": "user",
            "wallet-password": "pass",
        },
        "OA",
    ),
    (
        "panel.settings_wallet_method_check",
        "POST",
        "/panel/settings/methods/{method}/check",
        {},
        "OA",
    ),
    ("panel.settings_method_toggle", "POST", "/panel/settings/methods/{method}/toggle", {}, "OA"),
    (
        "panel.settings_method_fee",
        "POST",
        "/panel/settings/methods/{method}/fee",
        {"fee_fixed": "5", "fee_percent": "1.5"},
        "OA",
    ),
    ("panel.security_settings", "GET", "/panel/settings/security", None, "O"),
    (
        "panel.security_settings",
        "POST",
        "/panel/settings/security",
        {"require_two_factor": "y", "staff_refund_limit": "5"},
        "O",
    ),
    ("panel.users", "GET", "/panel/users", None, "OA"),
    (
        "panel.user_invite",
        "POST",
        "/panel/users",
        {"email": "new@shop.test", "role": "staff"},
        "OA",
    ),
    ("panel.user_role", "POST", "/panel/users/{colleague}/role", {"role": "viewer"}, "OA"),
    ("panel.user_deactivate", "POST", "/panel/users/{colleague}/deactivate", {}, "OA"),
    ("panel.user_reactivate", "POST", "/panel/users/{colleague}/reactivate", {}, "OA"),
    ("panel.audit_log", "GET", "/panel/audit-log", None, "OA"),
    ("panel.links", "GET", "/panel/links", None, "OASV"),
    ("panel.link_new", "GET", "/panel/links/new", None, "OAS"),
    ("panel.link_new", "POST", "/panel/links/new", {}, "OAS"),
    ("panel.link_edit", "GET", "/panel/links/{link}/edit", None, "OAS"),
    ("panel.link_edit", "POST", "/panel/links/{link}/edit", {}, "OAS"),
    ("panel.link_detail", "GET", "/panel/links/{link}", None, "OASV"),
    ("panel.link_status", "POST", "/panel/links/{link}/disable", {}, "OAS"),
    ("panel.reports", "GET", "/panel/reports", None, "OASV"),
    ("panel.report_download", "GET", "/panel/reports/payments.csv", None, "OASV"),
    ("panel.invoices", "GET", "/panel/invoices", None, "OASV"),
    ("panel.invoice_prefix", "POST", "/panel/invoices/prefix", {}, "OA"),
    ("panel.invoice_new", "GET", "/panel/invoices/new", None, "OAS"),
    ("panel.invoice_new", "POST", "/panel/invoices/new", {}, "OAS"),
    ("panel.invoice_edit", "GET", "/panel/invoices/{invoice}/edit", None, "OAS"),
    ("panel.invoice_edit", "POST", "/panel/invoices/{invoice}/edit", {}, "OAS"),
    ("panel.invoice_detail", "GET", "/panel/invoices/{invoice}", None, "OASV"),
    ("panel.invoice_send", "POST", "/panel/invoices/{invoice}/send", {}, "OAS"),
    ("panel.invoice_void", "POST", "/panel/invoices/{invoice}/void", {}, "OAS"),
    ("panel.invoice_pdf", "GET", "/panel/invoices/{invoice}/pdf", None, "OASV"),
    ("panel.plugins", "GET", "/panel/developers/plugins", None, "OA"),
    ("panel.compat_key_generate", "POST", "/panel/developers/plugins/keys", {}, "OA"),
    (
        "panel.compat_key_revoke",
        "POST",
        "/panel/developers/plugins/keys/{compat_key}/revoke",
        {},
        "OA",
    ),
    ("panel.compat_test_ipn", "POST", "/panel/developers/plugins/test-ipn", {}, "OA"),
    ("panel.mail_settings", "GET", "/panel/settings/email", None, "OA"),
    ("panel.mail_settings", "POST", "/panel/settings/email", {}, "OA"),
    ("panel.mail_settings_test", "POST", "/panel/settings/email/test", {}, "OA"),
    ("panel.settings_currencies", "GET", "/panel/settings/currencies", None, "OA"),
    (
        "panel.settings_currency_set",
        "POST",
        "/panel/settings/currencies",
        {"code": "EUR", "rate": "130"},
        "OA",
    ),
    ("panel.settings_currency_stop", "POST", "/panel/settings/currencies/USD/stop", {}, "OA"),
    (
        "panel.settings_currency_feed",
        "POST",
        "/panel/settings/currencies/feed",
        {"feed_url": "http://127.0.0.1:9/rates.json"},
        "OA",
    ),
    (
        "panel.settings_currency_feed_fetch",
        "POST",
        "/panel/settings/currencies/feed/fetch",
        {},
        "OA",
    ),
    ("panel.notifications", "GET", "/panel/notifications", None, "OA"),
    ("panel.notifications", "POST", "/panel/notifications", {}, "OA"),
    ("panel.notifications_test", "POST", "/panel/notifications/test", {}, "OA"),
    ("panel.notification_retry", "POST", "/panel/notifications/deliveries/999999/retry", {}, "OA"),
    ("panel.sms_balances", "GET", "/panel/sms-inbox/balances", None, "OASV"),
    ("panel.sms_balances_start", "POST", "/panel/sms-inbox/balances", {}, "OA"),
    ("panel.sms_balances_mode", "POST", "/panel/sms-inbox/balances/mode", {}, "OA"),
    ("panel.password", "GET", "/panel/account/password", None, "OASV"),
    (
        "panel.password",
        "POST",
        "/panel/account/password",
        {"current_password": "wrong password", "new_password": "x" * 12, "confirm_password": "y"},
        "OASV",
    ),
    ("panel.two_factor", "GET", "/panel/account/two-factor", None, "OASV"),
    ("panel.two_factor_enrol", "POST", "/panel/account/two-factor/enrol", {}, "OASV"),
    ("panel.two_factor_confirm", "POST", "/panel/account/two-factor/confirm", {}, "OASV"),
    ("panel.two_factor_disable", "POST", "/panel/account/two-factor/disable", {}, "OASV"),
    (
        "panel.two_factor_recovery_codes",
        "POST",
        "/panel/account/two-factor/recovery-codes",
        {},
        "OASV",
    ),
    ("panel.sign_out", "POST", "/panel/sign-out", {}, "OASV"),
    ("panel.test_mode", "POST", "/panel/test-mode", {"view": "test"}, "OASV"),
    ("panel.test_data", "GET", "/panel/test-data", None, "OA"),
    ("panel.test_data_delete", "POST", "/panel/test-data/delete", {"confirm": "yes"}, "OA"),
]
# Routes for visitors who are not signed in (sign-in, its code step, /panel/ redirecting).
PUBLIC_ROUTES = {"panel.sign_in", "panel.two_factor_sign_in", "panel.home"}
ROLE_LETTERS = {"O": "owner", "A": "admin", "S": "staff", "V": "viewer"}


def panel_endpoints(app):
    """(endpoint, method) of every panel route."""
    return {
        (rule.endpoint, method)
        for rule in app.url_map.iter_rules()
        if rule.endpoint.startswith("panel.")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }


def test_every_panel_route_declares_a_permission(app):
    undeclared = sorted(
        endpoint
        for endpoint, _ in panel_endpoints(app)
        if getattr(app.view_functions[endpoint], "required_permission", None)
        not in ALL_PERMISSIONS | {PUBLIC}
    )
    assert undeclared == [], "add @requires(<permission>) from gateway/accounts/roles.py"


def test_only_the_sign_in_routes_are_public(app):
    public = {
        endpoint
        for endpoint, _ in panel_endpoints(app)
        if app.view_functions[endpoint].required_permission == PUBLIC
    }
    assert public == PUBLIC_ROUTES


def test_every_panel_route_is_in_the_table_below(app):
    listed = {(endpoint, method) for endpoint, method, *_ in ROUTES}
    missing = (
        panel_endpoints(app)
        - listed
        - {(e, m) for e, m in panel_endpoints(app) if e in PUBLIC_ROUTES}
    )
    assert sorted(missing) == []
    assert sorted(listed - panel_endpoints(app)) == []


def test_the_table_agrees_with_the_declared_permissions(app):
    for endpoint, _, _, _, letters in ROUTES:
        permission = app.view_functions[endpoint].required_permission
        roles = {ROLE_LETTERS[letter] for letter in letters}
        assert roles == {role for role in ROLES if permission in PERMISSIONS[role]}, endpoint


def build_rows():
    """One of everything a route can show or act on, and a user of each role, made through the
    real paths; their ids."""
    brand = Brand(name="Test Shop", slug="test-shop", currencies="BDT,USD")
    db.session.add(brand)
    db.session.commit()
    customer = CustomerFactory(brand=brand)
    paid = completed_payment(brand=brand, customer=customer, amount=Decimal("500.00"))
    review = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id="AB12CD34EF",
        review_reason="SMS amount 450.00 differs from 500.00",
    )
    open_payment = PaymentFactory(brand=brand)
    device, _, _ = paired_device(brand)
    sms = forward_from(brand, bkash_text("300.00", "ZZ11YY22XX"))
    template = create_template(
        brand, "bkash", "Wallet notice", r"Tk (?P<amount>[\d.]+) TrxID (?P<trx_id>\w+)"
    )
    outbound = OutboundSms(
        brand_id=brand.id, to_number="+8801712345678", body="Hi", status="failed"
    )
    delivery = WebhookDelivery(
        brand_id=brand.id,
        payment_id=paid.id,
        event="payment.completed",
        event_id="evt_roles_1",
        url="http://127.0.0.1:9/hook",
        payload="{}",
        status="failed",
        attempts=1,
    )
    db.session.add_all([outbound, delivery])
    add_key(brand, "shop", ["read"])
    method = PaymentMethodFactory(brand=brand)
    colleague = UserFactory(brand=brand, email="colleague@shop.test")
    link = make_link(brand)
    invoice = an_invoice(brand)
    compat_key, _ = generate_compat_key(brand, "Shop plugin", "uddoktapay")
    endpoint, _ = create_endpoint(brand, True, "https://shop.example.com/hooks", ["*"])
    event = db.session.execute(db.select(Event).where(Event.brand_id == brand.id)).scalars().first()
    add_proof(paid, "image/png", image_bytes("PNG"))  # the receipt a manual payment carries
    # Money a wallet took that did not pay its payment (no wallet behind it: a refund is refused).
    unapplied = WalletPayment(
        payment_id=open_payment.id,
        method_id=method.id,
        provider="bkash",
        provider_payment_id="TR0011roles",
        state="unapplied",
        amount=Decimal("500.00"),
        paid_amount=Decimal("5.00"),
        last_error="The wallet was paid 5.00, not 500.00.",
    )
    db.session.add(unapplied)
    db.session.flush()
    # A refund of the paid payment the wallet did not answer in time, left for the merchant.
    wallet_refund = WalletRefund(
        payment_id=paid.id,
        wallet_payment_id=unapplied.id,
        amount=Decimal("50.00"),
        reason="x",
        created_at=utcnow() - timedelta(hours=1),  # past its sending window
    )
    db.session.add(wallet_refund)
    db.session.commit()
    users = {
        role: UserFactory(brand=brand, role=role, email=f"{role}@shop.test").id for role in ROLES
    }
    db.session.commit()
    return {
        "users": users,
        "compat_key": compat_key.id,
        "link": link.public_id,
        "invoice": invoice.public_id,
        "paid": paid.public_id,
        "review": review.public_id,
        "open": open_payment.public_id,
        "customer": customer.id,
        "sms": sms.public_id,
        "template": template.id,
        "outbound": outbound.id,
        "device": device.uuid,
        "pairing_code": db.session.execute(
            db.select(PairingCode.id).where(PairingCode.device_id == device.id)
        ).scalar_one(),
        "delivery": delivery.id,
        "endpoint": endpoint.public_id,
        "event": event.public_id,
        "method": method.id,
        "colleague": colleague.id,
        "unapplied": unapplied.id,
        "wallet_refund": wallet_refund.id,
    }


@pytest.fixture(scope="module")
def saved_rows(app):
    """build_rows once for the module: the ids, and every table's rows as they were saved."""
    with app.app_context():
        ids = build_rows()
        saved = {
            table: [dict(row._mapping) for row in db.session.execute(table.select())]
            for table in db.metadata.sorted_tables
        }
        db.session.remove()
        empty_every_table()
    return ids, saved


@pytest.fixture
def rows(saved_rows):
    """The saved rows put back (what build_rows made, as new for each test: a request may change
    them), cheaper than making them again."""
    ids, saved = saved_rows
    for table, table_rows in saved.items():
        if table_rows:
            db.session.execute(table.insert(), table_rows)
    db.session.commit()
    return ids


def every_row(app):
    """Every table's rows, to show that a refused request changed nothing at all."""
    db.session.commit()
    return {
        table.name: sorted(repr(tuple(row)) for row in db.session.execute(table.select()))
        for table in db.metadata.sorted_tables
    }


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(
    "endpoint, method, path, form, letters",
    ROUTES,
    ids=[f"{method} {endpoint}" for endpoint, method, *_ in ROUTES],
)
def test_each_role_gets_what_the_table_says(app, rows, role, endpoint, method, path, form, letters):
    user = db.session.get(User, rows["users"][role])
    client = panel_client(app)
    assert sign_in(client, user).status_code == 302
    url = path.format(**rows)
    allowed = role in {ROLE_LETTERS[letter] for letter in letters}
    if method == "GET":
        response = client.get(url)
    else:
        token = csrf_token(client)
        before = every_row(app)
        filled = {name: str(value).format(**rows) for name, value in form.items()}
        response = client.post(url, data={**filled, "csrf_token": token})
    if allowed:
        assert response.status_code not in (403, 404, 500), response.status_code
        if method == "GET":
            assert response.status_code in (200, 302)
    else:
        assert response.status_code == 403
        assert "Your role does not open this page" in response.get_data(as_text=True)
        if method == "POST":
            assert every_row(app) == before
