"""What a shop owner reads in the panel is written one way: money and dates through one filter each,
the audit log in people's words and local times, an empty chart without a made-up scale, one phone
placeholder, recovery codes that can be copied and downloaded.
"""

import re
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote

import pyotp

from gateway.extensions import db
from gateway.panel.audit_names import ACTION_NAMES
from gateway.panel.charts import daily_bars
from gateway.panel.formatting import PHONE_PLACEHOLDER
from tests.factories import CustomerFactory, UserFactory, completed_payment
from tests.invoices.conftest import an_invoice
from tests.panel.conftest import admin, as_admin, client, panel_client, post_form, sign_in  # noqa: F401
from tests.panel.test_payment_actions import refund

AXIS_LABEL = re.compile(r'<text class="axis"[^>]*text-anchor="end"[^>]*>([^<]*)</text>')
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
ISO_DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b")


def axis_labels(values):
    days = [
        {"label": f"{n} Nov", "value": Decimal(value), "value_text": str(value), "count": 0}
        for n, value in enumerate(values, start=1)
    ]
    return AXIS_LABEL.findall(str(daily_bars(days, "Volume", "Volume", "Day")))


def test_an_empty_chart_labels_its_baseline_only():
    assert axis_labels([0] * 30) == ["0"]
    assert axis_labels([]) == ["0"]


def test_a_small_chart_s_axis_labels_are_all_different():
    for values in ([1], [0, 1], [2], [0.5], [3, 1], [40], [2200, 0]):
        labels = axis_labels(values)
        assert len(labels) == 5 and len(set(labels)) == 5, (values, labels)
    assert axis_labels([1]) == ["0", "0.25", "0.5", "0.75", "1"]


def test_the_audit_log_shows_names_and_local_times_not_codes_or_iso_times(as_admin, brand):
    brand.timezone = "Asia/Dhaka"
    db.session.commit()
    assert post_form(as_admin, "/panel/devices/pairing").status_code == 200
    for language, name in (("en", "Pairing code made"), ("bn", None)):
        html = as_admin.get(f"/panel/audit-log?lang={language}").get_data(as_text=True)
        body = re.sub(r"<[^>]+>", "", html.split("<tbody>")[1].split("</tbody>")[0])
        assert "device.pairing_code" not in body and "expires_at" not in body
        assert not ISO_TIME.search(body), body
        if name:
            assert name in body and "Expires" in body
            assert re.search(r"Expires: \d{1,2} \w{3} \d{4}, \d\d:\d\d", body), body
        else:
            assert re.search(r"[০-৯]{1,2} \S+ [০-৯]{4}", body), body


def test_every_action_the_panel_records_has_a_name():
    recorded = set()
    for path in (Path(__file__).resolve().parents[2] / "gateway").rglob("*.py"):
        recorded |= set(
            re.findall(r'record_audit\(\s*[^,]+,\s*"([a-z_.]+)"', path.read_text(), re.S)
        )
    assert recorded and recorded <= set(ACTION_NAMES), sorted(recorded - set(ACTION_NAMES))


def test_an_invoice_s_due_date_reads_like_every_other_date(as_admin, brand):
    invoice = an_invoice(brand, due_date="2026-12-10")
    for path in ("/panel/invoices", f"/panel/invoices/{invoice.public_id}"):
        html = as_admin.get(path).get_data(as_text=True)
        main = html.split("<main")[1]
        assert "10 Dec 2026" in main, path
        assert "2026-12-10" not in main, path


def test_a_refund_s_message_writes_money_as_the_pages_do(as_admin, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    response = refund(as_admin, payment, {"amount": "200", "reason": "Returned"}, True)
    text = response.get_data(as_text=True)
    assert "Refunded ৳ 200.00." in text and "200.00 BDT" not in text


def test_every_phone_field_shows_the_one_placeholder(as_admin, brand):
    customer = CustomerFactory(brand=brand)
    pages = {
        "/panel/invoices/new": "customer_phone",
        "/panel/outbound-sms": "to",
        f"/panel/customers/{customer.id}/edit": "phone",
    }
    for path, name in pages.items():
        html = as_admin.get(path).get_data(as_text=True)
        field = re.search(rf'<input[^>]*name="{name}"[^>]*>', html).group(0)
        assert f'placeholder="{PHONE_PLACEHOLDER}"' in field, (path, field)
        placeholders = set(re.findall(r'placeholder="(\+?880[^"]*|01[^"]*)"', html))
        assert placeholders == {PHONE_PLACEHOLDER}, (path, placeholders)


def test_new_recovery_codes_come_with_a_download_and_a_copy_button(app, brand):
    owner = UserFactory(brand=brand, role="owner", email="codes@shop.test")
    client = panel_client(app)
    sign_in(client, owner)
    page = post_form(client, "/panel/account/two-factor/enrol").get_data(as_text=True)
    shown = re.search(r'id="totp-secret"[^>]*>([A-Z2-7]+)</code>', page).group(1)
    right = post_form(
        client, "/panel/account/two-factor/confirm", {"code": pyotp.TOTP(shown).now()}
    )
    html = right.get_data(as_text=True)
    codes = re.findall(r"<li><code>([a-z2-9]{4}(?:-[a-z2-9]{4}){3})</code></li>", html)
    assert len(codes) == 10
    link = re.search(r'<a [^>]*id="recovery-codes-download"[^>]*>', html).group(0)
    assert 'download="recovery-codes.txt"' in link
    href = re.search(r'href="data:text/plain;charset=utf-8,([^"]+)"', link).group(1)
    assert unquote(href) == "\n".join(codes) + "\n"
    assert re.search(r'<button[^>]*data-copy="recovery-code-list"', html)
    assert "panel-tools.js" in html and "//cdn" not in html
