"""The Plugins tab: platforms with their dialect and address, compatibility keys, the test IPN."""

import hashlib
import hmac
import json
import re

from gateway.compat.models.compat import CompatKey
from gateway.extensions import db
from tests.compat.conftest import P3_HEADER, U_HEADER
from tests.compat.ipn_receiver import header
from tests.compat.test_compat_errors import U_BODY
from tests.panel.conftest import (  # noqa: F401 - fixtures
    admin,
    as_admin,
    as_staff,
    audit_actions,
    client,
    post_form,
    staff,
)

SECRET = re.compile(r'<code id="new-compat-key">([^<]+)</code>')
PLATFORMS = (
    "WHMCS",
    "WooCommerce",
    "FOSSBilling",
    "Blesta",
    "Clientexec",
    "WISECP",
    "PerfexCRM",
    "Paymenter",
    "SMM panels",
    "Laravel",
    "PHP",
)


def test_the_plugins_tab_lists_every_platform_with_the_address_to_paste(as_admin, app):
    page = as_admin.get("/panel/developers/plugins")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    base = app.config["BASE_URL"].rstrip("/")
    for platform in PLATFORMS:
        assert f"<strong>{platform}</strong>" in html
    assert f'<code class="platform-url">{base}/api/checkout-v2</code>' in html
    assert f'<code class="platform-url">{base}/api</code>' in html
    assert "send this key back to your own server in every IPN" in html
    developers = as_admin.get("/panel/developers/api-keys").get_data(as_text=True)
    assert 'href="/panel/developers/plugins"' in developers


def test_staff_cannot_open_the_plugins_tab(as_staff):
    assert as_staff.get("/panel/developers/plugins").status_code == 403


def test_a_key_generated_in_the_panel_is_shown_once_works_and_revokes(as_admin, brand, admin):
    response = post_form(
        as_admin, "/panel/developers/plugins/keys", {"label": "WHMCS", "dialect": "uddoktapay"}
    )
    assert response.status_code == 200
    secret = SECRET.search(response.get_data(as_text=True)).group(1)
    created = as_admin.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: secret})
    assert created.status_code == 200
    key = db.session.execute(db.select(CompatKey)).scalar_one()
    assert audit_actions(brand)[-1] == ("compat_key.generate", admin.email, str(key.id))
    assert secret not in as_admin.get("/panel/developers/plugins").get_data(as_text=True)
    revoked = post_form(as_admin, f"/panel/developers/plugins/keys/{key.id}/revoke")
    assert revoked.status_code == 302
    refused = as_admin.post("/api/checkout-v2", json=U_BODY, headers={U_HEADER: secret})
    assert refused.status_code == 401
    assert audit_actions(brand)[-1] == ("compat_key.revoke", admin.email, str(key.id))


def test_a_form_without_its_csrf_token_makes_no_key(as_admin):
    response = as_admin.post(
        "/panel/developers/plugins/keys", data={"label": "x", "dialect": "piprapay3"}
    )
    assert response.status_code == 400
    assert db.session.execute(db.select(CompatKey)).first() is None


def test_the_test_ipn_reaches_the_typed_address_in_the_dialect_shape(as_admin, brand, ipn_receiver):
    made = post_form(
        as_admin, "/panel/developers/plugins/keys", {"label": "Laravel", "dialect": "piprapay3"}
    )
    secret = SECRET.search(made.get_data(as_text=True)).group(1)
    key = db.session.execute(db.select(CompatKey)).scalar_one()
    page = post_form(
        as_admin,
        "/panel/developers/plugins/test-ipn",
        {"key_id": str(key.id), "url": ipn_receiver.url},
    )
    assert page.status_code == 200
    assert "Your server answered HTTP 200." in page.get_data(as_text=True)
    [ipn] = ipn_receiver.received
    assert header(ipn, P3_HEADER) == secret
    expected = hmac.new(brand.webhook_secret.encode(), ipn["raw"], hashlib.sha256).hexdigest()
    assert header(ipn, "X-Service-Signature") == expected
    assert ipn["json"]["status"] == "completed" and ipn["json"]["pp_id"].isdigit()
    assert json.loads(ipn["raw"])["metadata"] == {"invoiceid": "TEST"}


def test_the_test_ipn_goes_through_the_transport_address_checks(as_admin, app, monkeypatch):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    post_form(as_admin, "/panel/developers/plugins/keys", {"label": "Woo", "dialect": "uddoktapay"})
    key = db.session.execute(db.select(CompatKey)).scalar_one()
    page = post_form(
        as_admin,
        "/panel/developers/plugins/test-ipn",
        {"key_id": str(key.id), "url": "http://127.0.0.1:9/ipn"},
    )
    html = page.get_data(as_text=True)
    assert "Not delivered:" in html and "private" in html


def test_the_plugins_tab_in_bangla_translates_its_words_and_the_warning(as_admin):
    html = as_admin.get("/panel/developers/plugins?lang=bn").get_data(as_text=True)
    assert "কোন প্লাগইন, কোন ঠিকানা" in html
    assert "এই প্লাগইনগুলো প্রতিটি IPN-এ এই কী আপনার নিজের সার্ভারে ফেরত পাঠায়" in html
    assert "send this key back" not in html and ">Plugins<" not in html


def test_an_ipn_shows_in_the_delivery_log_and_is_redelivered_with_its_key(
    as_admin, brand, compat_key, ipn_receiver
):
    from gateway.payments.lifecycle import complete_payment
    from gateway.webhooks.models.webhook import WebhookDelivery
    from tests.compat.conftest import compat_row, deliver_ipns

    secret = compat_key("uddoktapay")
    body = {**U_BODY, "webhook_url": ipn_receiver.url}
    assert (
        as_admin.post("/api/checkout-v2", json=body, headers={U_HEADER: secret}).status_code == 200
    )
    row = compat_row(_invoice())
    complete_payment(row.payment, provider="bkash", provider_trx_id="LOG1234567")
    deliver_ipns(ipn_receiver, 1)
    delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
    log = as_admin.get("/panel/developers/webhook-deliveries").get_data(as_text=True)
    assert "compat.uddoktapay" in log
    page = as_admin.get(f"/panel/developers/webhook-deliveries/{delivery.id}")
    assert page.status_code == 200
    assert secret not in page.get_data(as_text=True)
    redeliver = post_form(as_admin, f"/panel/developers/webhook-deliveries/{delivery.id}/redeliver")
    assert redeliver.status_code in (302, 303)
    db.session.expire_all()
    deliver_webhook_now(delivery.id)
    assert ipn_receiver.wait_for(2)
    first, again = ipn_receiver.received
    assert again["raw"] == first["raw"] and header(again, U_HEADER) == secret


def _invoice():
    from gateway.compat.models.compat import CompatPayment

    return db.session.execute(db.select(CompatPayment.external_id)).scalar_one()


def deliver_webhook_now(delivery_id):
    """Attempt the delivery in this process (the in-process worker may have done it already)."""
    from gateway.webhooks.delivery import deliver_webhook

    deliver_webhook(delivery_id)
