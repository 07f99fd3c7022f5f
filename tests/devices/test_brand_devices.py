"""The merchant's view of its phones without HTTP: the pairing code's expiry, listing, revoking."""

from datetime import timedelta

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.devices.brand_devices import (
    get_device,
    list_devices,
    revoke_paired_device,
    seconds_left,
    start_pairing,
)
from gateway.devices.pairing import pair_device
from gateway.devices.tokens import device_for_access_token
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from tests.factories import UserFactory, paired_device


def pairing(code, device_id="phone-1"):
    return {
        "pairing_code": code,
        "device_id": device_id,
        "device_name": "Counter phone",
        "app_version": "2.1.0",
        "platform": "android",
    }


@freeze_time("2025-03-01 10:00:00")
def test_a_pairing_code_is_six_digits_and_expires_five_minutes_after_it_is_made(brand):
    code, expires_at = start_pairing(brand)
    assert len(code) == 6 and code.isdigit()
    assert expires_at == utcnow() + timedelta(minutes=5)
    assert seconds_left(expires_at) == 300
    with freeze_time("2025-03-01 10:06:00"):
        assert seconds_left(expires_at) == 0
        with pytest.raises(DomainError) as late:
            pair_device(pairing(code))
        assert late.value.code == "INVALID_PAIRING_CODE"


def test_paired_phones_are_listed_newest_first_and_revoked_ones_apart(brand, other_brand):
    first, _, _ = paired_device(brand, name="First")
    second, tokens, _ = paired_device(brand, name="Second")
    paired_device(other_brand, name="Theirs")
    revoke_paired_device(first, UserFactory(brand=brand, email="owner@shop.test"))

    active, revoked = list_devices(brand)

    assert [device.name for device in active] == ["Second"]
    assert [(device.name, device.revoked_reason) for device in revoked] == [
        ("First", "revoked in the panel by owner@shop.test")
    ]
    assert device_for_access_token(tokens["access_token"]) == second


def test_a_revoked_phones_token_is_refused(brand):
    device, tokens, _ = paired_device(brand)
    revoke_paired_device(device, UserFactory(brand=brand))
    with pytest.raises(DomainError) as refused:
        device_for_access_token(tokens["access_token"])
    assert refused.value.code == "DEVICE_REVOKED"


def test_another_brands_phone_is_not_found(brand, other_brand):
    theirs, _, _ = paired_device(other_brand)
    with pytest.raises(DomainError) as missing:
        get_device(brand, theirs.uuid)
    assert http_status(missing.value) == 404
