"""The pairing page tells a shop owner where to get the companion app and whether a phone can reach
the QR's address.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import segno

from gateway.devices.models.device import PairingCode
from gateway.devices.pairing import pairing_qr_payload
from gateway.extensions import db
from gateway.panel.devices import unreachable_by_phone
from tests.panel.conftest import post_form

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r'<p class="pairing-code" id="pairing-code">(\d{6})</p>')
WARNING = 'id="unreachable-address"'


def pairing_page(client):
    """The page a super-administrator gets from the Pair a phone button, as text."""
    response = post_form(client, "/panel/devices/pairing")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def pairing_codes():
    """How many pairing codes the database holds."""
    return db.session.execute(db.select(db.func.count()).select_from(PairingCode)).scalar()


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:5000",
        "http://localhost:5000",
        "http://[::1]:5000",
        "http://127.0.1.1:8000",
    ],
)
def test_a_loopback_base_url_is_flagged_with_how_to_serve_on_the_network(
    as_admin, app, monkeypatch, base_url
):
    monkeypatch.setitem(app.config, "BASE_URL", base_url)
    html = pairing_page(as_admin)
    assert WARNING in html
    assert f"A phone cannot reach {base_url}" in html
    assert "<code>make run HOST=0.0.0.0</code>" in html and "set BASE_URL" in html


def test_a_network_address_gets_no_warning_and_the_qr_code_carries_it(as_admin, app, monkeypatch):
    monkeypatch.setitem(app.config, "BASE_URL", "http://192.168.1.20:5000")
    html = pairing_page(as_admin)
    code = CODE.search(html).group(1)
    assert WARNING not in html
    assert "reaches http://192.168.1.20:5000" in html
    # The QR drawn on the page is the one of {"server_url": BASE_URL, "otp": code}.
    expected = segno.make(pairing_qr_payload(code), error="m").svg_inline(
        scale=5, title="Pairing code"
    )
    assert expected in html
    assert '"server_url":"http://192.168.1.20:5000"' in pairing_qr_payload(code)


def test_a_brands_own_loopback_address_points_to_the_settings(as_admin, app, brand, monkeypatch):
    monkeypatch.setitem(app.config, "BASE_URL", "https://pay.shop.test")
    brand.base_url = "http://localhost:8000"
    db.session.commit()
    html = pairing_page(as_admin)
    assert "A phone cannot reach http://localhost:8000" in html
    assert "Base URL under Settings" in html and "make run HOST" not in html


def test_the_companion_app_download_address_is_shown_when_set(as_admin, app, monkeypatch):
    monkeypatch.setitem(
        app.config, "COMPANION_APP_URL", 'https://apps.shop.test/companion?v=2&ch="stable"'
    )
    html = pairing_page(as_admin)
    assert '<a href="https://apps.shop.test/companion?v=2&amp;ch=&#34;stable&#34;"' in html
    assert "COMPANION_APP_URL" not in html


def test_without_a_download_address_the_page_says_what_the_app_must_do(as_admin, app, monkeypatch):
    monkeypatch.setitem(app.config, "COMPANION_APP_URL", None)
    html = pairing_page(as_admin)
    assert (
        "No download address is set for the companion app" in html and "COMPANION_APP_URL" in html
    )
    assert (
        "/api/mobile/v1/devices" in html and "/api/mobile/v1/sms" in html and "AES-256-GCM" in html
    )
    assert '<a href="http' not in html.split('id="companion-app"')[1]


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "apps.shop.test/companion", "ftp://apps.shop.test/app.apk"]
)
def test_a_download_address_that_is_not_http_is_not_linked(as_admin, app, monkeypatch, url):
    monkeypatch.setitem(app.config, "COMPANION_APP_URL", url)
    html = pairing_page(as_admin)
    assert url not in html
    assert "No download address is set for the companion app" in html


def test_reopening_the_pairing_page_leads_back_to_devices_without_making_a_code(as_admin):
    before = pairing_codes()
    response = as_admin.get("/panel/devices/pairing")
    assert response.status_code == 302 and response.headers["Location"].endswith("/panel/devices")
    page = as_admin.get(response.headers["Location"]).get_data(as_text=True)
    assert "A pairing code is shown only once. Press “Add a phone” for a new one." in page
    assert 'href="/panel/devices/add">Add a phone</a>' in page
    assert pairing_codes() == before


def test_staff_reopening_the_pairing_page_are_told_who_makes_a_code(as_staff):
    response = as_staff.get("/panel/devices/pairing", follow_redirects=True)
    page = response.get_data(as_text=True)
    assert response.request.path == "/panel/devices"
    assert "A pairing code is shown only once; a super-administrator makes a new one." in page
    assert pairing_codes() == 0


def test_reopening_the_pairing_page_signed_out_asks_to_sign_in(client):
    response = client.get("/panel/devices/pairing")
    assert response.status_code == 302 and "/panel/sign-in" in response.headers["Location"]


@pytest.mark.parametrize(
    "url, unreachable",
    [
        ("http://127.0.0.1:5000", True),
        ("http://localhost", True),
        ("https://LOCALHOST:8443/x", True),
        ("http://[::1]:5000", True),
        ("http://127.8.9.10", True),
        ("http://app.localhost", True),
        ("http://0.0.0.0:5000", True),
        ("not a url", True),
        ("http://192.168.1.20:5000", False),
        ("https://pay.shop.test", False),
        ("http://10.0.0.7", False),
    ],
)
def test_a_phone_cannot_reach_loopback_or_unspecified_addresses(url, unreachable):
    assert unreachable_by_phone(url) is unreachable


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "None"),
        ("", "None"),
        ("https://apps.shop.test/c.apk", "https://apps.shop.test/c.apk"),
    ],
)
def test_companion_app_url_is_read_from_the_environment(value, expected):
    env = {key: val for key, val in os.environ.items() if key != "COMPANION_APP_URL"}
    if value is not None:
        env["COMPANION_APP_URL"] = value
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import config; print(config.load_settings()[0]['COMPANION_APP_URL'])",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == expected
