"""Helpers the checkout tests share: reading CSRF tokens off pages, posting the forms, reloading
rows, and the fixtures of a bKash number, a payment with return addresses and an app with a small
claim limit."""

import re

import pytest

from gateway import create_app
from gateway.extensions import db
from tests.factories import PaymentFactory, PaymentMethodFactory, reload
from tests.limited_apps import limited_app as rate_limited

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client, payment):
    """The CSRF token the pay page hands this client."""
    page = client.get(f"/checkout/{payment.token}")
    return CSRF_FIELD.search(page.get_data(as_text=True)).group(1)


def submit_trx_id(client, payment, method, trx_id="8N7A6B5C4D", **fields):
    """Post the claim form of one method as the customer's browser would."""
    data = {
        "csrf_token": csrf_token(client, payment),
        "method_id": method.id,
        "trx_id": trx_id,
        **fields,
    }
    return client.post(f"/checkout/{payment.token}/claim", data=data)


def cancel(client, payment):
    """Press the pay page's cancel button."""
    return client.post(
        f"/checkout/{payment.token}/cancel", data={"csrf_token": csrf_token(client, payment)}
    )


reloaded = reload  # the payment as the database now holds it


def text_of(response):
    """The response body as text."""
    return response.get_data(as_text=True)


THANKS = "https://shop.example/thanks"
CART = "https://shop.example/cart?step=2"


@pytest.fixture
def bkash(brand):
    return PaymentMethodFactory(brand=brand, number="01712345678")


@pytest.fixture
def payment(brand):
    return PaymentFactory(brand=brand, redirect_url=THANKS, cancel_url=CART)


def simulate_sms(runner, trx_id, amount="500.00"):
    """A bKash credit through the real ingestion path (the simulator device, via the test
    client)."""
    result = runner.invoke(
        args=[
            "gateway",
            "simulate-sms",
            "--provider",
            "bkash",
            "--amount",
            amount,
            "--trx-id",
            trx_id,
            "--via",
            "local",
        ]
    )
    assert result.exit_code == 0, result.output


@pytest.fixture
def limited_app(app):
    """The same database, served by an app whose claim limit is 2/hour."""
    with rate_limited(app, CHECKOUT_CLAIM_RATE_LIMIT="2/hour") as limited:
        yield limited
