"""Issue 14, finding 1: markup a merchant, a customer or a phone controls never reaches a page
unescaped.

Every such field is filled with hostile HTML straight in the database (the forms' own validation is
not what is tested), then every checkout page in every state and every panel page is rendered in
both languages; the raw markup must never appear, and no injected element may parse.
"""

import secrets
import uuid
from datetime import timedelta
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.audit import AuditLog
from gateway.clock import utcnow
from gateway.devices.models.device import Device, PairingCode
from gateway.devices.pairing import create_pairing_code
from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.models.sms_template import SmsTemplate
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import CustomerFactory, PaymentFactory, PaymentMethodFactory, UserFactory
from tests.invoices.conftest import an_invoice
from tests.links.support import make_link
from tests.panel.conftest import PASSWORD, panel_client, post_form, sign_in

BOLD = "<b>x</b>"
SCRIPT = '"><script>alert(1)</script>'
REFRESH = "<meta http-equiv=refresh content=0;url=//evil>"
FORM = "<form action=//evil>"
PAYLOADS = (BOLD, SCRIPT, REFRESH, FORM)
EVERYTHING = "".join(PAYLOADS)  # 101 characters: fits every String(120) and longer column
CUT = EVERYTHING[:100]  # for String(100) columns: the last tag lacks its ">", still markup
SHORT = BOLD  # for the narrow columns (numbers, phones: 11 to 20 characters)
MEDIUM = SCRIPT + BOLD  # 34 characters, for String(36)-String(64) columns

ROOT = Path(__file__).resolve().parents[2]


class InjectedElements(HTMLParser):
    """Every element on a page that only an injection could have put there."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "b":
            self.found.append("<b>")
        if tag == "script" and "src" not in attributes:
            self.in_script = True
        if tag == "meta" and "evil" in (attributes.get("content") or ""):
            self.found.append(f"<meta content={attributes['content']}>")
        if tag == "form" and "evil" in (attributes.get("action") or ""):
            self.found.append(f"<form action={attributes['action']}>")

    def handle_data(self, data):
        if self.in_script and "alert(1)" in data:
            self.found.append("<script>alert(1)")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = False


def assert_nothing_injected(response, where):
    """Neither the raw hostile markup nor any element it would create is on the page.

    A download (CSV, PDF) holds the values as they are: it must never be something a browser
    renders.
    """
    assert response.status_code < 500, where
    if response.mimetype in ("text/csv", "application/pdf"):
        assert response.headers["X-Content-Type-Options"] == "nosniff", where
        return
    html = response.get_data(as_text=True)
    for payload in PAYLOADS:
        for piece in ("<b>x", "<script>alert", "<meta http-equiv=refresh", "<form action=//evil"):
            if piece in payload:
                assert piece not in html, f"{where}: {piece!r} rendered unescaped"
    parser = InjectedElements()
    parser.feed(html)
    assert parser.found == [], f"{where}: injected {parser.found}"


@pytest.fixture
def hostile(brand):
    """A brand whose every merchant-, customer- and phone-controlled field holds hostile markup."""
    brand.name = EVERYTHING
    brand.logo_url = "https://cdn.example/" + EVERYTHING
    brand.webhook_url = "https://hooks.example/" + EVERYTHING
    admin = UserFactory(brand=brand, role="super_admin", email="owner@shop.test", name=EVERYTHING)
    UserFactory(brand=brand, role="staff", email=f"{MEDIUM}@shop.test", name=EVERYTHING)
    customer = CustomerFactory(brand=brand, name=EVERYTHING, email=EVERYTHING, phone=SHORT)
    method = PaymentMethodFactory(brand=brand, number="01712345678", instructions=EVERYTHING)
    PaymentMethodFactory(brand=brand, number=SHORT, instructions=EVERYTHING, is_demo=True)

    def payment(**fields):
        return PaymentFactory(
            brand=brand,
            customer=customer,
            reference=EVERYTHING,
            customer_name=EVERYTHING,
            customer_email=EVERYTHING,
            customer_phone=SHORT,
            # "note" and "method_id" as a counter sale keeps them (panel/counter.py)
            metadata_json={
                EVERYTHING: EVERYTHING,
                "order": [EVERYTHING],
                "note": EVERYTHING,
                "method_id": str(method.id),
            },
            redirect_url="https://shop.example/" + EVERYTHING,
            cancel_url="https://shop.example/cart?x=" + EVERYTHING,
            **fields,
        )

    payments = {
        "created": payment(),
        "processing": payment(
            status="processing",
            provider="bkash",
            provider_trx_id=MEDIUM,
            sender_number=SHORT,
            claimed_at=utcnow(),
        ),
        "held for review": payment(
            status="processing",
            provider="bkash",
            provider_trx_id=MEDIUM,
            claimed_at=utcnow(),
            review_reason=EVERYTHING,
        ),
        "completed": payment(
            status="completed", provider="bkash", provider_trx_id=MEDIUM, completed_at=utcnow()
        ),
        "cancelled": payment(status="cancelled", cancelled_at=utcnow()),
        "expired": payment(expires_at=utcnow() - timedelta(minutes=1)),
    }
    device = Device(
        brand_id=brand.id,
        uuid=str(uuid.uuid4()),
        device_id=EVERYTHING,
        name=EVERYTHING,
        app_version=SHORT,
        platform=SHORT,
        aes_key_sealed="x",
        status_json={EVERYTHING: EVERYTHING},
        last_heartbeat_at=utcnow(),
    )
    sms = InboundSms(
        public_id=str(uuid.uuid4()),
        brand_id=brand.id,
        sender=MEDIUM,
        body=EVERYTHING,
        content_hash=secrets.token_hex(32),
        provider="bkash",
        incoming=True,
        amount=Decimal("500.00"),
        provider_trx_id=MEDIUM,
        counterparty=MEDIUM,
        printed_time=SHORT,
        review_reason=EVERYTHING,
        received_at=utcnow(),
    )
    template = SmsTemplate(brand_id=brand.id, provider="bkash", name=CUT, pattern=EVERYTHING)
    outbound = OutboundSms(
        brand_id=brand.id, to_number=SHORT, body=EVERYTHING, status="failed", last_error=EVERYTHING
    )
    key = ApiKey(
        brand_id=brand.id,
        label=CUT,
        display_prefix=SHORT,
        key_hash=secrets.token_hex(32),
        scopes="read",
    )
    delivery = WebhookDelivery(
        brand_id=brand.id,
        payment_id=payments["completed"].id,
        event="payment.completed",
        event_id=secrets.token_hex(8),
        url="https://hooks.example/" + EVERYTHING,
        payload=EVERYTHING,
        status="failed",
        attempts=1,
        response_status=500,
        response_body=EVERYTHING,
    )
    db.session.add_all([device, sms, template, outbound, key, delivery])
    db.session.flush()
    sms.device_id = device.id  # the phone's last text, shown on Devices and its status answer
    create_pairing_code(brand)
    pairing = db.session.execute(db.select(PairingCode.id)).scalar_one()
    db.session.add(
        WebhookAttempt(
            delivery_id=delivery.id, response_status=500, response_body=EVERYTHING, error=EVERYTHING
        )
    )
    db.session.add(
        AuditLog(
            brand_id=brand.id,
            user_id=admin.id,
            user_email=EVERYTHING,
            action="payment.refund",
            target_type="payment",
            target_id=payments["completed"].public_id,
            details={"reason": EVERYTHING, EVERYTHING: EVERYTHING},
            ip_address="127.0.0.1",
            user_agent=EVERYTHING,
        )
    )
    link = make_link(
        brand,
        title=EVERYTHING,
        description=EVERYTHING,
        custom_fields=[{"kind": "text", "label": CUT, "required": False}],
    )
    invoice = an_invoice(
        brand,
        customer=None,
        customer_id=str(customer.id),
        notes=EVERYTHING,
        items=[{"description": EVERYTHING, "quantity": "1", "unit_price": "100"}],
        discount="0",
    )
    db.session.commit()
    return {
        "admin": admin,
        "pairing": pairing,
        "customer": customer,
        "link": link,
        "invoice": invoice,
        "method": method,
        "payments": payments,
        "sms": sms,
        "delivery": delivery,
        "device": device,
        "template": template,
    }


@pytest.mark.parametrize("lang", ["en", "bn"])
def test_no_checkout_page_renders_hostile_markup(client, hostile, lang):
    payments = hostile["payments"]
    for state, payment in payments.items():
        page = client.get(f"/checkout/{payment.token}?lang={lang}", follow_redirects=True)
        assert_nothing_injected(page, f"checkout, {state} payment")
    completed = payments["completed"]
    for suffix in ("receipt", "receipt.pdf"):
        receipt = client.get(f"/checkout/{completed.token}/{suffix}?lang={lang}")
        assert receipt.status_code == 200
        assert_nothing_injected(receipt, f"checkout, {suffix}")
    processing = payments["processing"]
    page = client.get(f"/checkout/{processing.token}/wait?lang={lang}")
    token = page.get_data(as_text=True).split('name="csrf_token" value="')[1].split('"')[0]
    confirm = client.post(f"/checkout/{processing.token}/cancel", data={"csrf_token": token})
    assert confirm.status_code == 200
    assert_nothing_injected(confirm, "checkout, cancel confirmation")
    created = payments["created"]
    page = client.get(f"/checkout/{created.token}?lang={lang}")
    token = page.get_data(as_text=True).split('name="csrf_token" value="')[1].split('"')[0]
    refused = client.post(
        f"/checkout/{created.token}/claim",
        data={"csrf_token": token, "method_id": hostile["method"].id, "trx_id": EVERYTHING},
    )
    assert refused.status_code == 422
    assert_nothing_injected(refused, "checkout, refused claim echoing the typed TrxID")
    assert_nothing_injected(client.get("/checkout/" + "x" * 40), "checkout, not found")


def test_reference_in_the_pay_steps_is_escaped_not_markup(client, hostile):
    """The original report: the reference inside "If asked for a reference, enter …" was markup."""
    page = client.get(f"/checkout/{hostile['payments']['created'].token}")
    html = page.get_data(as_text=True)
    assert "If asked for a reference, enter &lt;b&gt;x&lt;/b&gt;&#34;&gt;&lt;script&gt;" in html


def panel_urls(app, hostile):
    """Every GET page of the panel, its path parameters filled with the hostile rows."""
    values = {
        "payment_id": hostile["payments"]["processing"].public_id,
        "customer_id": hostile["customer"].id,
        "sms_id": hostile["sms"].public_id,
        "delivery_id": hostile["delivery"].id,
        "link_id": hostile["link"].public_id,
        "invoice_id": hostile["invoice"].public_id,
        "kind": "payments",
        "app_id": "sms-to-url",
        "device_uuid": hostile["device"].uuid,
        "code_id": hostile["pairing"],
    }
    urls = []
    with app.test_request_context():
        from flask import url_for

        for rule in app.url_map.iter_rules():
            if not rule.endpoint.startswith("panel.") or "GET" not in rule.methods:
                continue
            missing = set(rule.arguments) - set(values)
            assert not missing, f"{rule.rule}: give this test a hostile row for {missing}"
            urls.append(url_for(rule.endpoint, **{name: values[name] for name in rule.arguments}))
    return urls


@pytest.mark.parametrize("lang", ["en", "bn"])
def test_no_panel_page_renders_hostile_markup(app, hostile, lang):
    client = panel_client(app)
    assert sign_in(client, hostile["admin"], PASSWORD).status_code == 302
    urls = panel_urls(app, hostile)
    assert len(urls) > 20
    for url in urls:
        separator = "&" if "?" in url else "?"
        page = client.get(f"{url}{separator}lang={lang}")
        assert_nothing_injected(page, url)
    for url in ("/panel/payments?q=" + EVERYTHING, "/panel/customers?q=" + EVERYTHING):
        assert_nothing_injected(client.get(url), url)


def test_panel_messages_about_hostile_rows_are_escaped(app, hostile):
    """Flash messages and form answers that repeat a name, a number or a URL."""
    client = panel_client(app)
    assert sign_in(client, hostile["admin"], PASSWORD).status_code == 302
    template = hostile["template"]
    answers = {
        "template tester": post_form(
            client,
            "/panel/sms-templates/test",
            {"provider": "bkash", "pattern": EVERYTHING, "sample": EVERYTHING},
        ),
        "template toggled": post_form(
            client, f"/panel/sms-templates/{template.id}/toggle", follow_redirects=True
        ),
        "template saved": post_form(
            client,
            "/panel/sms-templates",
            {"provider": "bkash", "name": EVERYTHING, "pattern": EVERYTHING},
            follow_redirects=True,
        ),
        "device revoked": post_form(
            client, f"/panel/devices/{hostile['device'].uuid}/revoke", follow_redirects=True
        ),
        "webhook url": post_form(
            client,
            "/panel/developers/webhooks/url",
            {"webhook_url": "https://hooks.example/" + EVERYTHING},
            follow_redirects=True,
        ),
        "outbound sms": post_form(
            client,
            "/panel/outbound-sms",
            {"to_number": SHORT, "body": EVERYTHING},
            follow_redirects=True,
        ),
        "user added": post_form(
            client,
            "/panel/users",
            {"email": EVERYTHING, "name": EVERYTHING, "role": "staff", "password": EVERYTHING},
            follow_redirects=True,
        ),
        "api key": post_form(
            client,
            "/panel/developers/api-keys",
            {"label": EVERYTHING, "scopes": "read"},
            follow_redirects=True,
        ),
        "customer edited": post_form(
            client,
            f"/panel/customers/{hostile['customer'].id}/edit",
            {"name": EVERYTHING, "email": EVERYTHING, "phone": EVERYTHING},
            follow_redirects=True,
        ),
    }
    for what, answer in answers.items():
        assert_nothing_injected(answer, what)


def test_no_module_formats_values_with_flask_babels_lazy_gettext():
    """Its lazy string is trusted HTML as a whole; gateway.i18n.lazy_gettext escapes the values."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "gateway").rglob("*.py")
        if path.name != "i18n.py"
        and "lazy_gettext" in path.read_text()
        and "flask_babel import lazy_gettext" in path.read_text().replace("\n", " ")
    ]
    assert offenders == []
