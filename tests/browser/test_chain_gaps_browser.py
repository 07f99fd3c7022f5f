"""A missed wallet text on the shop owner's phone (390 px): the notice on the dashboard and the SMS
inbox, its balances readable and in view, the phone's name shown as typed, never as markup."""

import pytest
from playwright.sync_api import expect

from tests.browser.panel_support import (  # noqa: F401 - window and owner are fixtures
    owner,
    screenshot,
    sign_in,
    window,
)
from tests.factories import forward, paired_device
from tests.sms.test_balance_chain import credit

pytestmark = pytest.mark.browser
WIDTH = 390


def test_a_missed_text_is_told_on_the_dashboard_and_the_inbox_of_a_phone(
    live_url, brand, owner, window
):
    device, _, aes_key = paired_device(brand, name="<i>Till</i> phone")
    forward((device, aes_key), credit("500.00", "AAAA000001", "1500.00", 0))
    forward((device, aes_key), credit("300.00", "CCCC000003", "2000.00", 20))
    page = window(phone=True)
    sign_in(page, live_url, owner)

    for path in ("/panel/dashboard", "/panel/sms-inbox", "/panel/sms-inbox/balances"):
        assert page.goto(live_url + path).status == 200, path
        notice = page.locator(".chain-gaps")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("A phone missed a wallet text")
        expect(notice).to_contain_text(
            "balance jumped from ৳ 1,500.00 to ৳ 1,700.00: a text of ৳ 200.00 may be missing."
        )
        expect(notice).to_contain_text("bKash on <i>Till</i> phone")
        assert page.locator(".chain-gaps i").count() == 0  # the name is text, not markup
        box = notice.bounding_box()
        assert 0 <= box["x"] and box["x"] + box["width"] <= WIDTH, (path, box)
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH, path
    screenshot(page, "phone-balance-chains-missed-text")

    page.goto(live_url + "/panel/sms-inbox")
    page.get_by_role("link", name="The text after it").click()
    expect(page.locator(".chain-gap")).to_contain_text("a text of ৳ 200.00 may be missing")
