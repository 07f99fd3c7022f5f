"""Every main panel page fits its window at 1280, 1024 and 390 px: nothing overflows the page, and
nothing is clipped inside a box.

The rule: no element may be wider inside than it shows (scrollWidth > clientWidth) where its
overflow hides or scrolls the rest, and nothing may reach past the card holding it. The one
exception is on a phone: a table's wrapper declared a scroll container (`.table-scroll`, a
focusable region with a name, so a keyboard can scroll it too) may scroll sideways. On 1280 and
1024 px nothing scrolls sideways.
"""

import pytest
from playwright.sync_api import expect

from gateway.extensions import db
from gateway.links.links import create_link
from tests.browser.panel_support import (  # noqa: F401 - window and owner are fixtures
    owner,
    payment_in_review,
    shop_history,
    sign_in,
    window,
)
from tests.factories import CustomerFactory, PaymentMethodFactory
from tests.invoices.conftest import an_invoice

pytestmark = pytest.mark.browser

WIDTHS = (1280, 1024, 390)
PHONE_WIDTH = 390

# Per clipping box that holds more than it shows: what it is, its overflow, its sizes, and whether
# it is a declared sideways scroll container.
CLIPPED = """() => [...document.querySelectorAll('body *')].filter(element => {
    if (['INPUT', 'SELECT', 'TEXTAREA', 'OPTION'].includes(element.tagName)) return false;
    if (element.clientWidth <= 1) return false;
    if (!element.offsetParent && getComputedStyle(element).position !== 'fixed') return false;
    const overflow = getComputedStyle(element).overflowX;
    return overflow !== 'visible' && element.scrollWidth > element.clientWidth + 1;
}).map(element => ({
    box: element.tagName.toLowerCase() + (element.id ? '#' + element.id : '')
        + (typeof element.className === 'string' && element.className
           ? '.' + element.className.trim().replace(/\\s+/g, '.') : ''),
    text: (element.closest('section, .card') || element).querySelector('h2, h1')?.innerText || '',
    overflow: getComputedStyle(element).overflowX,
    scroll: element.scrollWidth,
    client: element.clientWidth,
    declared: element.matches(
        '.table-scroll[role=region][tabindex="0"]:is([aria-label], [aria-labelledby])'),
}))"""

# Per element of the page that reaches past the card (or figure, callout, main) holding it, with no
# clipping box between them: its table cell or button pokes out over the card's edge.
STICKING_OUT = """() => {
    const found = [];
    for (const element of document.querySelectorAll('main *')) {
        const rect = element.getBoundingClientRect();
        if (rect.width <= 1 || rect.height <= 1) continue;
        let holder = element.parentElement;
        while (holder && !holder.matches('.card, .stat, .callout, main')
               && getComputedStyle(holder).overflowX === 'visible') holder = holder.parentElement;
        if (!holder || !holder.matches('.card, .stat, .callout, main')) continue;
        const edge = holder.getBoundingClientRect();
        if (rect.right > edge.right + 1 || rect.left < edge.left - 1) found.push({
            box: element.tagName.toLowerCase() + ' ' + (element.innerText || '').slice(0, 30),
            text: (holder.querySelector('h2, h1') || {}).innerText || '',
            scroll: Math.round(rect.right), client: Math.round(edge.right), declared: false,
        });
    }
    return found;
}"""


def shop_to_look_at(brand):
    """A month of history, a demo number switched on, an invoice, a link and a payment in review."""
    shop_history(brand, days=30)
    PaymentMethodFactory(brand=brand, provider="bkash", number="01999999999", is_demo=True)
    payment = payment_in_review(brand)
    an_invoice(brand, customer={"name": "Sadia Islam", "email": "sadia@example.com"})
    create_link(brand, {"title": "Eid hamper (gift box of six)", "amount": None})
    CustomerFactory(brand=brand, name="Arif Chowdhury")
    db.session.commit()
    return payment.public_id


def main_pages(page, live_url, payment):
    """The sidebar's pages and a detail page of each kind the lists open."""
    paths = page.eval_on_selector_all(
        "nav[aria-label=Main] a[href^='/panel']", "links => links.map(a => a.getAttribute('href'))"
    )
    paths.append(f"/panel/payments/{payment}")
    for listing, selector in (
        ("/panel/customers", "a[href^='/panel/customers/']"),
        ("/panel/invoices", "a[href^='/panel/invoices/']"),
        ("/panel/links", "a[href^='/panel/links/']"),
    ):
        page.goto(live_url + listing)
        detail = page.eval_on_selector_all(
            f"main {selector}",
            "links => links.map(a => a.getAttribute('href'))"
            "  .filter(h => /^\\/panel\\/[a-z]+\\/[^/?]+$/.test(h) && !h.endsWith('/new'))",
        )
        assert detail, listing
        paths.append(detail[0])
    return list(dict.fromkeys(paths))


def overflows(page, width):
    """What overflows on the page shown: the page itself, what sticks out of its card, and boxes
    that clip what they hold."""
    found = []
    page_width = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    if page_width[0] > page_width[1]:
        found.append({"box": "page", "scroll": page_width[0], "client": page_width[1]})
    found.extend(page.evaluate(STICKING_OUT)[:3])
    for box in page.evaluate(CLIPPED):
        if not (width == PHONE_WIDTH and box["declared"]):
            found.append(box)
    return found


def test_no_main_panel_page_overflows_or_clips_at_1280_1024_or_390_px(
    live_url, brand, owner, window
):
    payment = shop_to_look_at(brand)
    page = window()
    sign_in(page, live_url, owner)
    expect(page.locator(".demo-banner")).to_be_visible()
    paths = main_pages(page, live_url, payment)
    assert len(paths) >= 20, paths
    faults = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for path in paths:
            assert page.goto(live_url + path).status == 200, path
            found = overflows(page, width)
            if found:
                faults[f"{width} {path}"] = found
    assert faults == {}, "\n".join(
        f"{where}: {box['box']} {box['scroll']} > {box['client']} {box.get('text', '')}"
        for where, boxes in faults.items()
        for box in boxes
    )


def test_the_demo_number_s_switch_off_and_the_all_time_column_show_at_1280_px(
    live_url, brand, owner, window
):
    shop_to_look_at(brand)
    page = window()
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in(page, live_url, owner)
    status = page.locator("section", has=page.get_by_role("heading", name="Payments by status"))
    for cell in (status.get_by_role("columnheader", name="All time"), status.locator("td").last):
        box = cell.bounding_box()
        card = status.bounding_box()
        assert box["x"] + box["width"] <= card["x"] + card["width"], (box, card)
    page.goto(f"{live_url}/panel/settings")
    row = page.locator("#methods tr", has_text="01999999999")
    button = row.get_by_role("button", name="Switch off")
    expect(button).to_be_visible()
    box, card = button.bounding_box(), page.locator("#methods").bounding_box()
    assert box["x"] + box["width"] <= card["x"] + card["width"], (box, card)
    assert box["x"] + box["width"] <= 1280
