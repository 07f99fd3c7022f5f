"""The heartbeat the phone is watched by: battery and app version stored and documented, old apps
unchanged.
"""

import pytest

from gateway.devices.tokens import access_token
from tests.factories import paired_device, reload

HEARTBEAT = "/api/mobile/v1/devices/heartbeats"


def headers(device):
    return {"Authorization": f"Bearer {access_token(device)}"}


def test_battery_charging_and_app_version_are_stored(client, brand):
    device, _, _ = paired_device(brand)
    answer = client.post(
        HEARTBEAT,
        json={"battery_level": 55, "is_charging": True, "app_version": "2.6.0", "future": 1},
        headers=headers(device),
    )
    assert answer.status_code == 200
    device = reload(device)
    assert device.status_json["battery_level"] == 55 and device.status_json["is_charging"] is True
    assert device.app_version == "2.6.0" and device.last_heartbeat_at is not None
    # Unknown fields are ignored, as docs/spec/CONTRACT.md says.
    assert "future" not in device.status_json


@pytest.mark.parametrize("body", [None, {}])
def test_an_older_app_s_bare_heartbeat_still_counts(client, brand, body):
    device, _, _ = paired_device(brand)
    kwargs = {} if body is None else {"json": body}
    assert client.post(HEARTBEAT, headers=headers(device), **kwargs).status_code == 200
    device = reload(device)
    assert device.last_heartbeat_at is not None and device.app_version == "1.0.0"


@pytest.mark.parametrize("field, value", [("battery_level", 101), ("app_version", "x" * 33)])
def test_a_bad_battery_or_version_is_refused_naming_the_field(client, brand, field, value):
    device, _, _ = paired_device(brand)
    answer = client.post(HEARTBEAT, json={field: value}, headers=headers(device))
    assert answer.status_code in (400, 422)
    assert field in answer.get_data(as_text=True)
    assert reload(device).last_heartbeat_at is None


def test_the_mobile_document_lists_battery_and_version_as_optional(client):
    spec = client.get("/api/mobile/v1/openapi.json").json
    heartbeat = spec["components"]["schemas"]["Heartbeat"]
    assert {"battery_level", "is_charging", "app_version"} <= set(heartbeat["properties"])
    assert "Battery charge" in heartbeat["properties"]["battery_level"]["description"]
    assert not heartbeat.get("required")
