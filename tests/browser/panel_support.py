"""Helpers of the panel's browser tests: a desktop window, signing in, screenshots, a shop with
history.

The server and Chromium come from tests/browser/conftest.py (live_url, browser).
"""

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time
from playwright.sync_api import expect

from gateway.clock import utcnow
from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.payments.refunds import create_refund
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import submit_claim
from tests.browser.conftest import SCREENSHOTS
from tests.factories import (
    CustomerFactory,
    PaymentFactory,
    PaymentMethodFactory,
    UserFactory,
    bkash_text,
    completed_payment,
    paired_device,
    sms_message,
)

PASSWORD = "correct horse battery"
DESKTOP = {"viewport": {"width": 1360, "height": 900}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
NAMES = (
    "Rahim Uddin",
    "Farhana Akter",
    "Tanvir Hasan",
    "Sadia Islam",
    "Arif Chowdhury",
    "Mim Rahman",
)
AMOUNTS = ("450.00", "1250.00", "780.00", "2200.00", "3499.00", "150.00")


@pytest.fixture
def window(browser):
    """Open pages in fresh browser windows (own cookies; desktop unless `phone`), closed after the
    test.
    """
    contexts = []

    def open_window(phone=False, locale="en-US"):
        context = browser.new_context(locale=locale, **(PHONE if phone else DESKTOP))
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_window
    for context in contexts:
        context.close()


@pytest.fixture
def owner(brand):
    """The shop's super-administrator, with a name that reads well in screenshots."""
    brand.name = "Dhaka Crafts"
    db.session.commit()
    return UserFactory(
        brand=brand, role="super_admin", email="owner@dhakacrafts.test", name="Nusrat Jahan"
    )


def sign_in(page, live_url, user, password=PASSWORD):
    """Sign in through the form as a person would; lands on the dashboard."""
    page.goto(f"{live_url}/panel/sign-in")
    page.get_by_label("E-mail").fill(user.email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Dashboard", exact=True)).to_be_visible()


def screenshot(page, name, full_page=True):
    """Keep a screenshot as build/screenshots/panel-<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(SCREENSHOTS / f"panel-{name}.png"),
        full_page=full_page,
        animations="disabled",
        caret="hide",
    )


def shop_history(brand, days=30):
    """A month of payments, a few refunds, a paired phone, two receiving numbers and a colleague."""
    PaymentMethodFactory(brand=brand, provider="bkash", number="01711223344")
    PaymentMethodFactory(brand=brand, provider="nagad", number="01811223344", kind="merchant")
    UserFactory(brand=brand, email="karim@dhakacrafts.test", name="Karim Ahmed")
    customers = [CustomerFactory(brand=brand, name=name) for name in NAMES]
    now = utcnow()
    # One frozen clock moved from payment to payment: each freeze_time start patches every loaded
    # module, a move does not.
    with freeze_time(now) as clock:
        for day in range(days - 1, -1, -1):
            for count in range(1 + (day * 7) % 4):
                customer = customers[(day + count) % len(customers)]
                clock.move_to(now - timedelta(days=day, hours=1 + count))
                payment = completed_payment(
                    brand=brand,
                    amount=Decimal(AMOUNTS[(day * 3 + count) % len(AMOUNTS)]),
                    customer=customer,
                    customer_name=customer.name,
                    customer_phone=customer.phone,
                    customer_email=customer.email,
                    reference=f"ORDER-{2000 + day * 10 + count}",
                )
                if (day + count) % 9 == 4:
                    create_refund(
                        brand, payment.transaction.trx_id, Decimal("100.00"), "Item returned"
                    )
    for number, status in enumerate(("created", "cancelled", "expired")):
        PaymentFactory(
            brand=brand,
            status=status,
            customer_name=NAMES[number],
            reference=f"ORDER-{2400 + number}",
        )
    db.session.add(
        Device(
            brand_id=brand.id,
            uuid=str(uuid.uuid4()),
            device_id="pixel-7",
            name="Shop phone",
            aes_key_sealed="sealed",
            last_heartbeat_at=now - timedelta(minutes=3),
        )
    )
    db.session.commit()


def payment_in_review(brand):
    """A payment held for review the real way: the customer claimed TrxID 9C4D7E2F1A, the SMS said
    450.00.
    """
    now = utcnow()
    payment = PaymentFactory(
        brand=brand,
        amount=Decimal("500.00"),
        created_at=now - timedelta(minutes=3),
        customer_name="Rahim Uddin",
        customer_phone="+8801712345678",
        reference="ORDER-2041",
    )
    submit_claim(payment, "bkash", "9C4D7E2F1A", "01712345678")
    device, _, aes_key = paired_device(brand, device_id="review-phone")
    ingest_batch(device, [sms_message(aes_key, bkash_text("450.00", "9C4D7E2F1A"))])
    db.session.refresh(payment)
    assert payment.review_reason == "SMS amount 450.00 differs from 500.00"
    return payment
