"""Small things a new user hits: a favicon on every page, plurals in the singular, every audit
action named.
"""

import re
from pathlib import Path

import pytest

from gateway.extensions import db
from gateway.panel.audit_names import ACTION_NAMES
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory

ROOT = Path(__file__).resolve().parents[2]


def test_the_panel_and_the_checkout_link_a_local_favicon(client, as_admin, brand, app):
    panel = as_admin.get("/panel/dashboard").get_data(as_text=True)
    checkout = (
        app.test_client()
        .get(f"/checkout/{PaymentFactory(brand=brand).token}")
        .get_data(as_text=True)
    )
    for page in (panel, checkout):
        assert '<link rel="icon" type="image/svg+xml" href="/static/favicon.svg">' in page
    with client.get("/static/favicon.svg") as icon:
        assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
        assert b"<svg" in icon.data and b"http" not in icon.data.replace(
            b"http://www.w3.org/2000/svg", b""
        )


def test_every_audit_action_the_panel_records_has_a_name():
    source = "\n".join(path.read_text() for path in (ROOT / "gateway").rglob("*.py"))
    # The action argument: a name, or `"a" if … else "b"`.
    actions = re.findall(r"record_audit\([^,()]+,\s*([^,()\n]+)[,)]", source)
    recorded = {name for action in actions for name in re.findall(r'"([a-z_.]+)"', action)}
    assert {"sign_in", "user.deactivate", "user.reactivate", "payment.refund"} <= recorded
    assert recorded <= set(ACTION_NAMES), sorted(recorded - set(ACTION_NAMES))


def test_no_translated_text_writes_a_plural_by_hand():
    files = [
        *(ROOT / "templates").rglob("*.html"),
        *(ROOT / "gateway" / "panel").glob("*.py"),
        *(ROOT / "gateway" / "checkout").glob("*.py"),
    ]
    by_hand = [
        (path.name, text)
        for path in files
        for text in re.findall(r'_l?\("[^"]*\(s\)[^"]*"', path.read_text())
    ]
    assert by_hand == []


@pytest.mark.parametrize(
    "attempts, said", [(1, "Delivered after 1 attempt ·"), (3, "Delivered after 3 attempts ·")]
)
def test_a_payment_s_webhook_says_its_attempts_in_the_right_number(as_staff, brand, attempts, said):
    payment = PaymentFactory(brand=brand)
    db.session.add(
        WebhookDelivery(
            brand_id=brand.id,
            payment_id=payment.id,
            event="payment.completed",
            event_id=f"evt_{attempts}",
            url="https://shop.example/hook",
            payload="{}",
            status="sent",
            attempts=attempts,
        )
    )
    db.session.commit()
    html = as_staff.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
    assert said in html and "attempt(s)" not in html
