"""PipraPay 2.x's POST return in a real browser: the form submits itself, or by its button without
script.
"""

from urllib.parse import parse_qs

import pytest

from gateway.extensions import db
from gateway.payments.lifecycle import complete_payment
from tests.browser.conftest import browser, live_server, new_page  # noqa: F401 - fixtures
from tests.compat.conftest import P2_HEADER, compat_row
from tests.compat.ipn_receiver import IpnReceiver
from tests.compat.test_compat_errors import P2_BODY

pytestmark = pytest.mark.browser


@pytest.fixture
def shop():
    """The merchant's return page: a local server that records what the browser posts to it."""
    receiver = IpnReceiver(answer_body=b"<!doctype html><title>Thanks</title><p>Thanks</p>")
    yield receiver
    receiver.close()


@pytest.mark.parametrize("javascript", [True, False])
def test_the_post_return_reaches_the_shop_with_the_pp_id(
    client,
    compat_key,
    live_server,
    new_page,
    shop,
    javascript,  # noqa: F811 - fixtures
):
    secret = compat_key("piprapay2")
    body = {
        **P2_BODY,
        "return_type": "POST",
        "redirect_url": shop.url.replace("/ipn", "/thanks"),
        "webhook_url": "https://shop.example/ipn",
    }
    pp_id = client.post("/api/create-charge", json=body, headers={P2_HEADER: secret}).get_json()[
        "pp_id"
    ]
    row = compat_row(pp_id)
    complete_payment(row.payment, provider="bkash", provider_trx_id="BR0WSER123")
    token = row.return_token
    db.session.commit()

    page = new_page(javascript=javascript)
    page.goto(f"{live_server}/compat/return/{token}")
    if not javascript:
        page.get_by_role("button", name="Continue to the shop").click()
    page.wait_for_url("**/thanks?from=gateway")
    assert shop.wait_for(1)
    # The receiver records GETs too (the browser's favicon request): the shop got one POST.
    [posted] = [item for item in shop.received if item["method"] == "POST"]
    assert posted["path"] == "/thanks?from=gateway"
    assert parse_qs(posted["raw"].decode()) == {"pp_id": [str(pp_id)]}
