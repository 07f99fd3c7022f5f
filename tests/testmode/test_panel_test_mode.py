"""The panel's test mode: the "Viewing test data" switch over the lists, and "Delete all test data"
(owner/admin, confirmed, audited, nothing live touched)."""

from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.invoices.models.invoice import Invoice, InvoiceItem
from gateway.links.models.link import PaymentLink
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment, Refund, Transaction
from gateway.sms.matching import submit_claim
from gateway.sms.models.balance_chain import BalanceChain
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.webhooks.models.endpoint import WebhookEndpoint
from gateway.webhooks.models.event import Event
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import PaymentFactory, UserFactory, bkash_text, forward
from tests.panel.conftest import client, csrf_token, panel_client, post_form, sign_in  # noqa: F401
from tests.testmode.conftest import create_payment, simulate

MODELS = (
    Payment,
    Transaction,
    Refund,
    Customer,
    PaymentLink,
    Invoice,
    InvoiceItem,
    InboundSms,
    WebhookDelivery,
    WebhookAttempt,
    BalanceChain,
    Event,
    WebhookEndpoint,
)
INVOICE = {
    "customer": {"name": "Karim", "email": "karim@example.com", "phone": "+8801711111111"},
    "items": [{"description": "Monthly plan", "quantity": "1", "unit_price": "400.00"}],
    "due_date": "2026-12-31",
}


def rows_by_mode():
    """{model name: (live rows, test rows)} of every table test mode writes to."""
    db.session.expire_all()
    counts = {}
    for model in MODELS:
        rows = db.session.execute(db.select(model)).scalars().all()
        counts[model.__name__] = [row.id for row in rows]
    return counts


def one_of_everything(api, headers, callback_url="http://127.0.0.1:9/hooks"):
    """A paid payment (with its webhook delivery) refunded in part, a customer, a link, an invoice,
    made through the API with `headers`' key."""
    payment = create_payment(
        api,
        headers,
        callback_url=callback_url,
        customer_name="Rahim",
        customer_mail="rahim@example.com",
    )
    link = api.post(
        "/api/v1/payment-links", json={"title": "Hamper", "amount": "500.00"}, headers=headers
    )
    assert link.status_code == 201, link.json
    invoice = api.post("/api/v1/invoices", json=INVOICE, headers=headers)
    assert invoice.status_code == 201, invoice.json
    endpoint = api.post(
        "/api/v1/webhook-endpoints",
        json={"url": "https://hooks.shop.example/events", "enabled_events": ["*"]},
        headers=headers,
    )
    assert endpoint.status_code == 201, endpoint.json
    text = api.post(
        "/api/v1/sms/outbound", json={"to": "+8801712345678", "body": "Hello"}, headers=headers
    )
    assert text.status_code == 201, text.json
    return payment


@pytest.fixture
def owner(brand):
    return UserFactory(brand=brand, role="owner", email="owner@shop.test")


@pytest.fixture
def both_modes(app, brand, owner, test_auth, live_auth, phone):
    """The same objects in live mode (paid by a phone's real text) and in test mode (simulated)."""
    api = app.test_client()
    live = one_of_everything(api, live_auth)
    payment = db.session.execute(
        db.select(Payment).where(Payment.public_id == live["payment_id"])
    ).scalar_one()
    submit_claim(payment, "bkash", "1A2B3C4D5E")
    forward(phone, bkash_text("500.00", "1A2B3C4D5E"))
    test = one_of_everything(api, test_auth)
    assert (
        simulate(api, test_auth, test["payment_id"], "paid").json["data"]["status"] == "completed"
    )
    for headers, created in ((live_auth, live), (test_auth, test)):
        trx = api.get(f"/api/v1/payments/{created['payment_id']}", headers=headers).json["data"]
        refund = api.post(
            "/api/v1/refunds", json={"trx_id": trx["trx_id"], "amount": "100.00"}, headers=headers
        )
        assert refund.status_code == 201, refund.json
    db.session.expire_all()
    return live, test


def live_rows():
    """Ids of every live row (and every row of a live payment) of the tables test mode writes."""
    db.session.expire_all()
    live_payments = db.select(Payment.id).where(Payment.livemode.is_(True))
    return {
        "payments": ids(Payment, Payment.livemode.is_(True)),
        "transactions": ids(Transaction, Transaction.payment_id.in_(live_payments)),
        "refunds": ids(Refund, Refund.livemode.is_(True)),
        "customers": ids(Customer, Customer.livemode.is_(True)),
        "links": ids(PaymentLink, PaymentLink.livemode.is_(True)),
        "invoices": ids(Invoice, Invoice.livemode.is_(True)),
        "texts": ids(InboundSms, InboundSms.livemode.is_(True)),
        "deliveries": ids(WebhookDelivery, WebhookDelivery.livemode.is_(True)),
        "events": ids(Event, Event.livemode.is_(True)),
        "endpoints": ids(WebhookEndpoint, WebhookEndpoint.livemode.is_(True)),
        "outbound": ids(OutboundSms, OutboundSms.livemode.is_(True)),
    }


def ids(model, *where):
    return sorted(db.session.execute(db.select(model.id).where(*where)).scalars())


def test_deleting_test_data_takes_every_test_object_and_nothing_live(client, owner, both_modes):
    live_before = live_rows()
    assert all(live_before.values()), live_before  # one live row of each, at least
    sign_in(client, owner)

    confirm = client.get("/panel/test-data")
    assert confirm.status_code == 200
    assert "Delete all test data?" in confirm.get_data(as_text=True)
    deleted = post_form(client, "/panel/test-data/delete", {"confirm": "yes"})

    assert deleted.status_code == 303
    assert live_rows() == live_before
    for model, livemode in (
        (Payment, Payment.livemode),
        (Refund, Refund.livemode),
        (Customer, Customer.livemode),
        (PaymentLink, PaymentLink.livemode),
        (Invoice, Invoice.livemode),
        (InboundSms, InboundSms.livemode),
        (Event, Event.livemode),
        (WebhookEndpoint, WebhookEndpoint.livemode),
        (WebhookDelivery, WebhookDelivery.livemode),
        (OutboundSms, OutboundSms.livemode),
    ):
        assert ids(model, livemode.is_(False)) == [], model.__name__
    assert ids(Transaction) == live_before["transactions"]
    assert ids(WebhookDelivery) == live_before["deliveries"]
    [entry] = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "test_data.delete")
    ).scalars()
    assert entry.user_email == "owner@shop.test"
    assert entry.details["payments"] == 1 and entry.details["refunds"] == 1
    assert entry.details["inbound_sms"] == 1 and entry.details["invoices"] == 1


def test_the_first_post_without_the_confirmation_deletes_nothing(client, owner, both_modes):
    sign_in(client, owner)
    before = rows_by_mode()

    answer = post_form(client, "/panel/test-data/delete")

    assert answer.status_code == 303 and answer.headers["Location"].endswith("/panel/test-data")
    assert rows_by_mode() == before


def test_deleting_without_a_csrf_token_deletes_nothing(client, owner, both_modes):
    sign_in(client, owner)
    before = rows_by_mode()

    answer = client.post("/panel/test-data/delete", data={"confirm": "yes"})

    assert answer.status_code == 400
    assert rows_by_mode() == before


@pytest.mark.parametrize("role", ["staff", "viewer"])
def test_staff_and_viewers_cannot_delete_test_data(app, brand, both_modes, role):
    user = UserFactory(brand=brand, role=role)
    browser = panel_client(app)
    sign_in(browser, user)
    before = rows_by_mode()

    assert browser.get("/panel/test-data").status_code == 403
    answer = post_form(browser, "/panel/test-data/delete", {"confirm": "yes"})

    assert answer.status_code == 403
    assert rows_by_mode() == before
    assert (
        db.session.execute(db.select(AuditLog).where(AuditLog.action == "test_data.delete"))
        .scalars()
        .all()
        == []
    )


def test_another_brand_s_test_data_is_left_alone(app, client, owner, other_brand, both_modes):
    from gateway.accounts.api_keys import generate_key

    _, secret = generate_key(other_brand, "theirs", ["read", "write"], livemode=False)
    theirs = create_payment(app.test_client(), {"Authorization": f"Bearer {secret}"})
    sign_in(client, owner)

    post_form(client, "/panel/test-data/delete", {"confirm": "yes"})

    db.session.expire_all()
    assert ids(Payment, Payment.livemode.is_(False)) == ids(
        Payment, Payment.public_id == theirs["payment_id"]
    )


def switch(client, view, back="/panel/payments"):
    return client.post(
        "/panel/test-mode",
        data={"view": view, "back": back, "csrf_token": csrf_token(client)},
    )


def test_the_switch_shows_test_data_in_every_list_until_switched_back(client, owner, both_modes):
    live, test = both_modes
    sign_in(client, owner)
    pages = ("/panel/payments", "/panel/sms-inbox", "/panel/customers")

    live_pages = {page: client.get(page).get_data(as_text=True) for page in pages}
    assert "data-test-mode" not in live_pages["/panel/payments"]
    assert live["payment_id"] in live_pages["/panel/payments"]
    assert test["payment_id"] not in live_pages["/panel/payments"]
    assert "1A2B3C4D5E" in live_pages["/panel/sms-inbox"]

    answer = switch(client, "test")
    assert answer.status_code == 303 and answer.headers["Location"] == "/panel/payments"
    test_pages = {page: client.get(page).get_data(as_text=True) for page in pages}
    assert "data-test-mode" in test_pages["/panel/payments"]
    assert 'aria-checked="true"' in test_pages["/panel/payments"]
    assert test["payment_id"] in test_pages["/panel/payments"]
    assert live["payment_id"] not in test_pages["/panel/payments"]
    assert "1A2B3C4D5E" not in test_pages["/panel/sms-inbox"]
    simulated = db.session.execute(
        db.select(InboundSms).where(InboundSms.livemode.is_(False))
    ).scalar_one()
    assert simulated.provider_trx_id in test_pages["/panel/sms-inbox"]

    switch(client, "live")
    assert test["payment_id"] not in client.get("/panel/payments").get_data(as_text=True)


def test_the_switch_shows_each_mode_s_webhook_deliveries(client, owner, both_modes):
    live, test = both_modes
    sign_in(client, owner)
    page = "/panel/developers/webhook-deliveries"

    live_page = client.get(page).get_data(as_text=True)
    switch(client, "test")
    test_page = client.get(page).get_data(as_text=True)

    live_ids = ids(WebhookDelivery, WebhookDelivery.payment_id.in_(payment_ids(True)))
    test_ids = ids(WebhookDelivery, WebhookDelivery.payment_id.in_(payment_ids(False)))
    assert live_ids and test_ids
    for delivery_id in live_ids:
        assert f"/webhook-deliveries/{delivery_id}" in live_page
        assert f"/webhook-deliveries/{delivery_id}" not in test_page
    for delivery_id in test_ids:
        assert f"/webhook-deliveries/{delivery_id}" in test_page
        assert f"/webhook-deliveries/{delivery_id}" not in live_page


def payment_ids(livemode):
    return db.select(Payment.id).where(Payment.livemode.is_(livemode))


def test_the_switch_is_kept_per_session(app, client, owner, both_modes):
    live, test = both_modes
    sign_in(client, owner)
    switch(client, "test")
    other = panel_client(app)
    sign_in(other, owner)

    assert test["payment_id"] in client.get("/panel/payments").get_data(as_text=True)
    assert test["payment_id"] not in other.get("/panel/payments").get_data(as_text=True)


@pytest.mark.parametrize(
    "data",
    [{"view": "both"}, {"view": ""}, {}, {"view": "test", "csrf_token": "forged"}],
    ids=["unknown", "empty", "missing", "forged-token"],
)
def test_a_bad_switch_changes_nothing(client, owner, both_modes, data):
    live, test = both_modes
    sign_in(client, owner)
    if "csrf_token" not in data:
        data = {**data, "csrf_token": csrf_token(client)}

    answer = client.post("/panel/test-mode", data=data)

    assert answer.status_code in (303, 400)
    assert test["payment_id"] not in client.get("/panel/payments").get_data(as_text=True)


@pytest.mark.parametrize("back", ["https://evil.example/", "//evil.example/x", "/api/v1/payments"])
def test_the_switch_never_sends_anyone_off_the_panel(client, owner, back):
    sign_in(client, owner)

    answer = switch(client, "test", back=back)

    assert answer.status_code == 303 and answer.headers["Location"] == "/panel/dashboard"


def test_the_dashboard_counts_only_the_mode_shown(client, owner, brand, both_modes):
    sign_in(client, owner)
    PaymentFactory(brand=brand, amount=Decimal("777.00"), livemode=False)

    live_page = client.get("/panel/dashboard").get_data(as_text=True)
    switch(client, "test")
    test_page = client.get("/panel/dashboard").get_data(as_text=True)

    assert live_page != test_page
    assert "data-test-mode" in test_page and "data-test-mode" not in live_page


def test_while_viewing_test_data_the_developers_page_makes_a_test_key(client, owner, brand):
    from gateway.accounts.models.api_key import ApiKey

    sign_in(client, owner)
    switch(client, "test", back="/panel/developers/api-keys")
    page = client.get("/panel/developers/api-keys").get_data(as_text=True)
    made = post_form(
        client, "/panel/developers/api-keys", {"label": "Plugin tests", "scopes": ["read"]}
    )

    assert "Generate a test key" in page
    assert made.status_code == 200 and "gw_test_" in made.get_data(as_text=True)
    key = db.session.execute(db.select(ApiKey).where(ApiKey.label == "Plugin tests")).scalar_one()
    assert key.livemode is False
    [entry] = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "api_key.generate")
    ).scalars()
    assert entry.details["livemode"] is False
