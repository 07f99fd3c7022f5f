"""Forwarders are the brand's phones in the panel: listed on the Devices page with their last text
and heartbeat, and revoked there like any phone, which refuses their intake URL at once."""

from gateway.devices.forwarders import create_forwarder
from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import bkash_text
from tests.forwarder_apps import ping_event, signed, sms_received_event
from tests.panel.conftest import post_form, reloaded


def path_of(url):
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def test_a_forwarder_is_listed_and_revoked_on_the_devices_page(as_staff, brand, staff):
    device, credentials = create_forwarder(brand, "android-sms-gateway", "Gateway <b>phone</b>")
    path = path_of(credentials.url)
    body, headers = signed(ping_event(), credentials.signing_key)
    assert as_staff.post(path, data=body, headers=headers).status_code == 200

    html = as_staff.get("/panel/devices").get_data(as_text=True)
    assert "Gateway &lt;b&gt;phone&lt;/b&gt;" in html and "<b>phone</b>" not in html
    assert "dot-online" in html
    assert credentials.signing_key not in html

    response = post_form(as_staff, f"/panel/devices/{device.uuid}/revoke", follow_redirects=True)
    assert response.status_code == 200
    assert reloaded(device).revoked_reason == f"revoked in the panel by {staff.email}"
    body, headers = signed(sms_received_event(bkash_text()), credentials.signing_key)
    refused = as_staff.post(path, data=body, headers=headers)
    assert refused.status_code == 401 and refused.get_json()["code"] == "FORWARDER_REVOKED"
    assert db.session.execute(db.select(InboundSms)).first() is None
