"""Fixtures of the compatibility tests: a key per dialect, a bKash number, a receiver of IPNs."""

import pytest

from gateway.compat.keys import generate_compat_key
from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.compat.ipn_receiver import IpnReceiver
from tests.factories import PaymentMethodFactory

U_HEADER = "RT-UDDOKTAPAY-API-KEY"
P2_HEADER = "mh-piprapay-api-key"
P3_HEADER = "MHS-PIPRAPAY-API-KEY"


@pytest.fixture
def compat_key(brand):
    """Make a compatibility key of `brand` for a dialect; returns its secret."""
    counter = iter(range(1000))

    def make(dialect, of_brand=None):
        _, secret = generate_compat_key(of_brand or brand, f"plugin-{next(counter)}", dialect)
        return secret

    return make


@pytest.fixture
def bkash(brand):
    return PaymentMethodFactory(brand=brand, number="01712345678")


@pytest.fixture
def ipn_receiver():
    receiver = IpnReceiver()
    yield receiver
    receiver.close()


def compat_row(external_id):
    """The dialect row of a payment by its dialect id."""
    db.session.expire_all()
    return db.session.execute(
        db.select(CompatPayment).where(CompatPayment.external_id == str(external_id))
    ).scalar_one()


def deliver_ipns(receiver, count):
    """Attempt every pending delivery now (the in-process worker may race us: either one wins),
    then wait until the receiver holds `count` requests."""
    db.session.expire_all()
    for delivery_id in db.session.execute(
        db.select(WebhookDelivery.id).where(WebhookDelivery.status == "pending")
    ).scalars():
        deliver_webhook(delivery_id)
    assert receiver.wait_for(count), receiver.received
    return receiver.received
