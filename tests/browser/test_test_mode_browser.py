"""Test mode in Chromium: a test payment's checkout buttons pay it, hold it for review or let it
expire, with the signed webhook a real receiver checks; the panel's "Viewing test data" switch and
"Delete all test data"."""

import re

import pytest
import requests
from playwright.sync_api import expect

from gateway.accounts.api_keys import generate_key
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.browser.panel_support import screenshot as panel_screenshot
from tests.browser.panel_support import sign_in, window  # noqa: F401 - fixture
from tests.factories import PaymentFactory, PaymentMethodFactory, UserFactory
from tests.webhook_support import WebhookReceiver, drain_queues, rq_redis  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture
def test_key(brand):
    """Authorization header of a test key of the brand."""
    _, secret = generate_key(brand, "tests", ["read", "write"], livemode=False)
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def receiver(brand):
    receiver = WebhookReceiver(brand.webhook_secret)
    yield receiver
    receiver.close()
    assert receiver.rejected == []


def make_test_payment(live_url, headers, receiver):
    """A test payment made by the shop's server through the API; the answer's data."""
    answer = requests.post(
        f"{live_url}/api/v1/payments",
        headers=headers,
        timeout=10,
        json={
            "amount": "500.00",
            "currency": "BDT",
            "reference": "TEST-1042",
            "callback_url": receiver.url,
        },
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


def status_of(payment_id):
    db.session.expire_all()
    return db.session.execute(
        db.select(Payment.status).where(Payment.public_id == payment_id)
    ).scalar_one()


def test_the_matching_sms_button_pays_the_test_payment_and_the_webhook_arrives_signed(
    live_url,
    test_key,
    receiver,
    rq_redis,
    new_page,
    screenshot,  # noqa: F811
):
    created = make_test_payment(live_url, test_key, receiver)
    page = new_page()
    page.goto(created["checkout_url"])

    expect(page.get_by_text("Test payment", exact=True)).to_be_visible()
    expect(
        page.get_by_role("button", name="Simulate an amount mismatch (goes to review)")
    ).to_be_visible()
    expect(page.get_by_role("button", name="Let it expire")).to_be_visible()
    expect(page.get_by_label("Transaction ID (TrxID)")).to_have_count(0)
    screenshot(page, "test-payment")
    page.get_by_role("button", name="Simulate a matching SMS").click()

    expect(page.get_by_role("heading", name="Payment received")).to_be_visible()
    expect(page.get_by_text("Test payment", exact=True)).to_be_visible()
    assert status_of(created["payment_id"]) == "completed"
    drain_queues()
    assert receiver.wait_for(1)
    assert [hit["json"]["event"] for hit in receiver.received] == ["payment.completed"]
    assert receiver.received[0]["json"]["data"]["payment_id"] == created["payment_id"]


def test_the_mismatch_button_holds_the_test_payment_for_review(
    live_url,
    test_key,
    receiver,
    rq_redis,
    new_page,  # noqa: F811
):
    created = make_test_payment(live_url, test_key, receiver)
    page = new_page()
    page.goto(created["checkout_url"])

    page.get_by_role("button", name="Simulate an amount mismatch (goes to review)").click()

    expect(page.get_by_role("heading", name="Confirming your payment")).to_be_visible()
    expect(page.locator(".held")).to_be_visible()
    assert status_of(created["payment_id"]) == "processing"
    drain_queues()
    assert receiver.received == []


def test_the_expire_button_expires_the_test_payment_with_its_webhook(
    live_url,
    test_key,
    receiver,
    rq_redis,
    new_page,  # noqa: F811
):
    created = make_test_payment(live_url, test_key, receiver)
    page = new_page()
    page.goto(created["checkout_url"])

    page.get_by_role("button", name="Let it expire").click()

    expect(page.get_by_role("heading", name="This payment has expired")).to_be_visible()
    assert status_of(created["payment_id"]) == "expired"
    drain_queues()
    assert receiver.wait_for(1)
    assert [hit["json"]["event"] for hit in receiver.received] == ["payment.expired"]


def test_a_live_payment_s_checkout_has_no_simulate_button(live_url, brand, new_page):
    PaymentMethodFactory(brand=brand)
    payment = PaymentFactory(brand=brand)
    page = new_page()
    page.goto(f"{live_url}/checkout/{payment.token}")

    expect(page.get_by_role("button", name="I have paid — verify").first).to_be_visible()
    expect(page.get_by_text("Test payment", exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name="Simulate a matching SMS")).to_have_count(0)


def test_the_panel_switches_to_test_data_and_deletes_it(live_url, brand, window):  # noqa: F811
    owner = UserFactory(brand=brand, role="owner", email="owner@shop.test")
    live = PaymentFactory(brand=brand, reference="LIVE-1")
    test = PaymentFactory(brand=brand, reference="TEST-1", livemode=False)
    live_id, test_id = live.id, test.id
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/payments")
    expect(page.get_by_text("LIVE-1")).to_be_visible()
    expect(page.get_by_text("TEST-1")).to_have_count(0)

    page.get_by_role("switch", name="Viewing test data").click()

    expect(page.get_by_role("switch", name="Viewing test data")).to_have_attribute(
        "aria-checked", "true"
    )
    expect(page.get_by_text("Viewing test data.")).to_be_visible()
    page.wait_for_url(re.compile(r"/panel/payments\??$"))
    expect(page.get_by_text("TEST-1")).to_be_visible()
    expect(page.get_by_text("LIVE-1")).to_have_count(0)
    panel_screenshot(page, "test-mode")
    page.goto(f"{live_url}/panel/customers")
    expect(page.get_by_text("Viewing test data.")).to_be_visible()

    page.get_by_role("link", name="Delete all test data").click()
    expect(page.get_by_role("heading", name="Delete all test data?")).to_be_visible()
    page.get_by_role("button", name="Delete all test data").click()

    expect(page.get_by_text("All test data is deleted: 1 test payments")).to_be_visible()
    db.session.expire_all()
    assert db.session.get(Payment, test_id) is None
    assert db.session.get(Payment, live_id) is not None
    page.get_by_role("switch", name="Viewing test data").click()
    expect(page.get_by_role("switch", name="Viewing test data")).to_have_attribute(
        "aria-checked", "false"
    )
    expect(page.get_by_text("Viewing test data.")).to_have_count(0)
