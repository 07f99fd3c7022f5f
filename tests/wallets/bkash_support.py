"""What the bKash tests share: the stand-in running, an API method pointed at it, and the
customer's round trip (our button, bKash's page, back to our callback) through the test client."""

from urllib.parse import urlsplit

import pytest
import requests

from gateway.wallets.credentials import add_api_method
from tests.checkout_helpers import csrf_token
from tests.wallet_standins.bkash import CREDENTIALS, BkashStandIn
from tests.wallets.wallet_pages import wallet_page_of


@pytest.fixture
def standin():
    with BkashStandIn() as server:
        yield server


@pytest.fixture
def bkash_api(brand, standin):
    """The brand's bKash API method, its credentials the stand-in's."""
    return add_api_method(brand, "bkash", standin.base_url, CREDENTIALS)


def press_pay_with_bkash(client, payment, method):
    """The customer presses "Pay with bKash": our answer (the page that sends the browser on to
    bKash's when it worked; wallet_page_of reads where)."""
    return client.post(
        f"/checkout/{payment.token}/wallet/{method.id}",
        data={"csrf_token": csrf_token(client, payment)},
    )


def choose_at_bkash(wallet_page, choice):
    """The customer's choice on the stand-in's page (success, cancel, failure): the callback URL
    bKash sends them back to."""
    answer = requests.post(f"{wallet_page}/{choice}", allow_redirects=False, timeout=10)
    assert answer.status_code == 302
    return answer.headers["Location"]


def come_back(client, callback):
    """The customer's browser opens the callback URL bKash gave it."""
    parts = urlsplit(callback)
    return client.get(f"{parts.path}?{parts.query}")


def pay_through_bkash(client, payment, method, choice="success"):
    """The whole round trip; our answer to the callback."""
    started = press_pay_with_bkash(client, payment, method)
    return come_back(client, choose_at_bkash(wallet_page_of(started), choice))
