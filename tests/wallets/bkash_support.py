"""What the bKash tests share: the stand-in running, an API method pointed at it, and the
customer's round trip (our button, bKash's page, back to our callback) through the test client."""

import html
import re
from urllib.parse import urlsplit

import pytest
import requests

from gateway.wallets.credentials import add_api_method
from tests.checkout_helpers import csrf_token
from tests.wallet_standins.bkash import CREDENTIALS, BkashStandIn


@pytest.fixture
def standin():
    with BkashStandIn() as server:
        yield server


@pytest.fixture
def bkash_api(brand, standin):
    """The brand's bKash API method, its credentials the stand-in's."""
    return add_api_method(brand, "bkash", standin.base_url, CREDENTIALS)


WALLET_LINK = re.compile(r'id="wallet-page" href="([^"]+)"')


def press_pay_with_bkash(client, payment, method):
    """The customer presses "Pay with bKash": our answer (the page forwarding to bKash's when it
    worked)."""
    return client.post(
        f"/checkout/{payment.token}/wallet/{method.id}",
        data={"csrf_token": csrf_token(client, payment)},
    )


def wallet_page(answer):
    """The wallet page our forwarding page sends the customer to (its link and meta refresh)."""
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_data(as_text=True)
    url = html.unescape(WALLET_LINK.search(body).group(1))
    assert f'content="0;url={WALLET_LINK.search(body).group(1)}"' in body
    return url


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
    return come_back(client, choose_at_bkash(wallet_page(started), choice))
