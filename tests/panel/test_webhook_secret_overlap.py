"""The panel's rotation keeps the old webhook secret signing for the overlap, and says until
when."""

from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from tests.panel.conftest import post_form, reloaded


def test_rotating_in_the_panel_keeps_the_old_secret_signing_and_says_until_when(as_admin, brand):
    old = brand.webhook_secret
    now = utcnow().replace(microsecond=0)
    with freeze_time(now):
        response = post_form(as_admin, "/panel/developers/webhooks/secret/rotate")

    html = response.get_data(as_text=True)
    brand = reloaded(brand)
    assert brand.webhook_secret != old and brand.webhook_secret_previous == old
    assert brand.webhook_secret_previous_until == now + timedelta(hours=24)
    assert 'id="previous-secret-until"' in html and "X-Service-Signature-Previous" in html
    assert old not in html


def test_rotating_without_an_overlap_says_nothing_of_a_previous_secret(as_admin, brand, app):
    app.config["WEBHOOK_SECRET_OVERLAP"] = 0
    try:
        response = post_form(as_admin, "/panel/developers/webhooks/secret/rotate")
    finally:
        app.config["WEBHOOK_SECRET_OVERLAP"] = 24 * 3600

    assert 'id="previous-secret-until"' not in response.get_data(as_text=True)
    assert reloaded(brand).webhook_secret_previous is None
