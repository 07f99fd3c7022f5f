"""A forwarder's time of arrival that no brand's zone can print is refused by name (422), with
nothing stored, on the first request and on the app's retry."""

import json

import pytest

from gateway.devices.forwarders import create_forwarder
from gateway.extensions import db
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import bkash_text, reload
from tests.forwarder_apps import signed, sms_received_event, sms_to_url_headers

EDGE_TIMES = [
    "0001-01-01T00:00:00+06:00",
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T23:59:59.000+00:00",
    253402300799999,
    "1969-12-31T23:59:59.000+00:00",
]


def path_of(url):
    """The path of an absolute intake URL."""
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def assert_refused_twice(client, send, field):
    """The request and its retry: each a 422 naming `field`, nothing stored, no text heard."""
    for _ in range(2):
        path, body, headers, device = send()
        answer = client.post(path, data=body, headers=headers)
        assert answer.status_code == 422, answer.get_data(as_text=True)
        envelope = answer.get_json()
        assert envelope["code"] == "VALIDATION_ERROR"
        assert [e["field"] for e in envelope["errors"]] == [field]
    assert db.session.execute(db.select(InboundSms)).scalars().all() == []
    assert reload(device).last_sms_at is None


@pytest.mark.parametrize("received_at", EDGE_TIMES, ids=str)
def test_sms_gateways_received_at_no_zone_can_print_is_refused(client, brand, received_at):
    device, credentials = create_forwarder(brand, "android-sms-gateway", "Counter phone")

    def send():
        event = sms_received_event(bkash_text("500.00", "8N7A6B5C4D"), event_id="e1")
        event["payload"]["receivedAt"] = received_at
        body, headers = signed(event, credentials.signing_key)
        return path_of(credentials.url), body, headers, device

    assert_refused_twice(client, send, "payload.receivedAt")


@pytest.mark.parametrize("field", ["receivedStamp", "sentStamp"])
@pytest.mark.parametrize("stamp", [*EDGE_TIMES, "253402300799999"], ids=repr)
def test_sms_to_urls_stamp_no_zone_can_print_is_refused(client, brand, field, stamp):
    device, credentials = create_forwarder(brand, "sms-to-url", "Till phone")
    header = f"{credentials.header_name}: {credentials.header_value}"
    template = {
        "from": "bKash",
        "text": bkash_text("500.00", "8N7A6B5C4D"),
        "sentStamp": None,
        "receivedStamp": None,
        "sim": "sim1",
    }

    def send():
        body = json.dumps({**template, field: stamp}).encode()
        return path_of(credentials.url), body, sms_to_url_headers(header), device

    assert_refused_twice(client, send, field)
