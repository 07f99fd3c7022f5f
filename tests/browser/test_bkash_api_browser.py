"""In Chromium: a customer presses "Pay with bKash", pays on bKash's page (the local stand-in of
bKash's tokenized checkout), comes back paid, and the shop's real webhook receiver gets the signed
payment.completed; a customer who cancels at bKash is back on the pay page with the reason."""

import pytest
import requests
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.payments.models.payment import Payment, Transaction
from gateway.wallets.credentials import add_api_method
from tests.wallet_standins.bkash import CREDENTIALS, BkashStandIn
from tests.webhook_support import drain_queues, receiver, rq_redis  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


@pytest.fixture
def standin():
    with BkashStandIn() as server:
        yield server


@pytest.fixture
def bkash_shop(brand, standin):
    brand.name = "Demo Shop"
    db.session.commit()
    add_api_method(brand, "bkash", standin.base_url, CREDENTIALS)
    return brand


def create_payment(live_url, auth, receiver):
    answer = requests.post(
        f"{live_url}/api/v1/payments",
        headers=auth,
        timeout=10,
        json={
            "amount": "750.00",
            "currency": "BDT",
            "reference": "ORDER-2042",
            "callback_url": receiver.url,
        },
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]


def payment_row(public_id):
    db.session.expire_all()
    return db.session.execute(db.select(Payment).where(Payment.public_id == public_id)).scalar_one()


def test_a_customer_pays_with_bkash_and_the_shop_hears_of_it(
    live_url, bkash_shop, auth, receiver, rq_redis, standin, new_page
):
    created = create_payment(live_url, auth, receiver)
    page = new_page()
    page.goto(created["checkout_url"])
    page.get_by_role("button", name="Pay with bKash").click()

    expect(page.get_by_role("heading", name="bKash stand-in")).to_be_visible()
    expect(page.locator("#amount")).to_have_text("750.00 BDT")
    page.get_by_role("button", name="Confirm").click()

    expect(page.get_by_role("heading", name="Payment received")).to_be_visible()
    payment = payment_row(created["payment_id"])
    assert payment.status == "completed"
    transaction = db.session.execute(
        db.select(Transaction).where(Transaction.payment_id == payment.id)
    ).scalar_one()
    (bkash_payment,) = standin.payments.values()
    assert transaction.provider_trx_id == bkash_payment["trxID"]
    drain_queues()
    assert receiver.wait_for(1)
    assert [hit["json"]["event"] for hit in receiver.received] == ["payment.completed"]
    assert receiver.received[0]["json"]["data"]["payment_id"] == created["payment_id"]


def test_a_customer_who_cancels_at_bkash_is_back_on_the_pay_page(
    live_url, bkash_shop, auth, receiver, rq_redis, standin, new_page
):
    created = create_payment(live_url, auth, receiver)
    page = new_page()
    page.goto(created["checkout_url"])
    page.get_by_role("button", name="Pay with bKash").click()
    page.get_by_role("button", name="Cancel").click()

    expect(page.get_by_text("You cancelled the payment in the wallet.")).to_be_visible()
    expect(page.get_by_role("button", name="Pay with bKash")).to_be_visible()
    assert payment_row(created["payment_id"]).status == "created"
    drain_queues()
    assert receiver.received == []
