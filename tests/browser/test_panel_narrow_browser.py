"""The panel on the shop owner's phone (390 px): every list row is a card with its amount and status
in view.
"""

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.panel.payments import PER_PAGE
from gateway.payments.models.payment import Payment
from tests.browser.panel_support import (  # noqa: F401 - window and owner are fixtures
    owner,
    payment_in_review,
    screenshot,
    shop_history,
    sign_in,
    window,
)

pytestmark = pytest.mark.browser
WIDTH = 390


def boxes_in_view(page, row_selector):
    """Per row: the amount's and the status badge's bounding boxes, and the top of the row's other
    cells.
    """
    return page.eval_on_selector_all(
        row_selector,
        """rows => rows.map(row => {
        const box = element => {
            const r = element.getBoundingClientRect();
            return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
        };
        const others = [...row.querySelectorAll('td:not(.card-amount):not(.card-status)')]
            .filter(cell => cell.offsetParent);
        const amount = row.querySelector('.card-amount');
        const status = row.querySelector('.card-status');
        return {amount: box(amount), status: box(status.querySelector('.badge')),
                text: amount.innerText + ' ' + status.innerText,
                others_top: Math.min(...others.map(cell => cell.getBoundingClientRect().top))};
    })""",
    )


def assert_amount_and_status_lead_each_card(page, row_selector, rows_expected):
    """Each row's amount and status lie inside the 390 px viewport, side by side, above the row's
    other lines.
    """
    rows = boxes_in_view(page, row_selector)
    assert len(rows) == rows_expected
    for row in rows:
        for part in ("amount", "status"):
            box = row[part]
            assert 0 <= box["left"] < box["right"] <= WIDTH, (part, box, row["text"])
            assert box["bottom"] > box["top"], (part, row["text"])
        assert row["amount"]["right"] <= row["status"]["left"], row["text"]
        assert max(row["amount"]["bottom"], row["status"]["bottom"]) <= row["others_top"] + 1, row[
            "text"
        ]
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH


def test_on_a_phone_the_payments_list_shows_each_amount_and_status(live_url, brand, owner, window):
    shop_history(brand, days=7)
    payment_in_review(brand)
    page = window(phone=True)
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/payments")
    expect(page.get_by_role("heading", name="Payments", exact=True)).to_be_visible()
    assert (
        page.locator("table.cards thead").bounding_box()["height"] <= 1
    )  # headers kept for screen readers only
    total = db.session.execute(db.select(db.func.count()).select_from(Payment)).scalar_one()
    assert_amount_and_status_lead_each_card(page, "table.cards tbody tr", min(total, PER_PAGE))
    expect(page.locator("tbody tr", has_text="ORDER-2041").locator(".card-status")).to_have_text(
        "In review"
    )
    screenshot(page, "phone-payments", full_page=False)


def test_on_a_phone_the_dashboard_s_latest_payments_show_amount_and_status(
    live_url, brand, owner, window
):
    shop_history(brand, days=7)
    page = window(phone=True)
    sign_in(page, live_url, owner)
    latest = page.locator("section", has=page.get_by_role("heading", name="Latest payments"))
    latest.scroll_into_view_if_needed()
    assert_amount_and_status_lead_each_card(page, "section:has(#recent-heading) tbody tr", 6)
    screenshot(page, "phone-dashboard-latest", full_page=True)


def test_on_a_desktop_the_payments_list_stays_a_table(live_url, brand, owner, window):
    shop_history(brand, days=2)
    page = window()
    sign_in(page, live_url, owner)
    page.goto(f"{live_url}/panel/payments")
    expect(page.get_by_role("columnheader", name="Amount")).to_be_visible()
    tops = page.eval_on_selector_all(
        "table.cards tbody tr:first-child td",
        "cells => cells.map(c => Math.round(c.getBoundingClientRect().top))",
    )
    assert len(set(tops)) == 1


LIST_PAGES = [
    "/panel/customers",
    "/panel/refunds",
    "/panel/sms-inbox",
    "/panel/outbound-sms",
    "/panel/audit-log",
    "/panel/users",
    "/panel/devices",
    "/panel/settings",
    "/panel/developers/webhook-deliveries",
    "/panel/developers/api-keys",
    "/panel/sms-templates",
]


def test_on_a_phone_every_list_page_fits_and_keeps_its_leading_cells_in_view(
    live_url, brand, owner, window
):
    shop_history(brand, days=3)
    payment_in_review(brand)
    page = window(phone=True)
    sign_in(page, live_url, owner)
    for path in LIST_PAGES:
        assert page.goto(live_url + path).status == 200, path
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH, path
        leading = page.eval_on_selector_all(
            ", ".join(
                f"table.cards td.{part}"
                for part in ("card-amount", "card-status", "card-title", "card-side")
            ),
            "cells => cells.map(cell => { const r = cell.getBoundingClientRect(); return "
            "[r.left, r.right]; })",
        )
        assert all(0 <= left < right <= WIDTH for left, right in leading), (path, leading)
        screenshot(page, "phone" + path.replace("/panel", "").replace("/", "-"), full_page=False)
