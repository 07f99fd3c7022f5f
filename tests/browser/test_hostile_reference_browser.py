"""Issue 14, finding 1 in a real browser: a hostile order reference is text on the pay page, never
markup.
"""

import pytest
from playwright.sync_api import expect

from tests.factories import PaymentFactory, PaymentMethodFactory

pytestmark = pytest.mark.browser
HOSTILE = '<b id="injected">x</b>"><script>window.injected=1</script><form action=//evil.test>'


def test_a_hostile_reference_reads_as_text_and_runs_nothing(brand, live_url, new_page):
    PaymentMethodFactory(brand=brand, provider="bkash", number="01700000000")
    payment = PaymentFactory(brand=brand, reference=HOSTILE)
    page = new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_url}/checkout/{payment.token}")
    steps = page.locator("ol.steps li")
    expect(steps.filter(has_text="If asked for a reference")).to_contain_text(HOSTILE)
    expect(page.locator("p.reference strong")).to_have_text(HOSTILE)
    assert page.locator("#injected").count() == 0
    assert page.locator("form[action*='evil']").count() == 0
    assert page.evaluate("window.injected") is None
    assert dialogs == []
