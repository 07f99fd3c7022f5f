"""Forwarders without HTTP: creating one per app, its secret at rest, listing and revoking."""

import hashlib

import pytest

from gateway.devices.brand_devices import list_devices
from gateway.devices.forwarder_intake import intake_forwarder, verify_forwarder_request
from gateway.devices.forwarders import (
    SECRET_HEADER,
    SIGNING_KEY_PURPOSE,
    brand_forwarders,
    create_forwarder,
    forwarder_url,
    revoke_forwarder,
    signing_key,
)
from gateway.domain_errors import DomainError, NotFound
from gateway.extensions import db
from gateway.sealing import seal
from tests.factories import paired_device, reload


def test_an_sms_gateway_forwarder_gets_a_generated_signing_key_sealed_at_rest(app, brand):
    device, credentials = create_forwarder(brand, "android-sms-gateway", "Counter phone")

    assert credentials.url == f"{app.config['BASE_URL']}/api/forwarders/{device.uuid}/sms"
    assert credentials.url == forwarder_url(device)
    assert len(credentials.signing_key) >= 12 and credentials.header_name is None
    stored = reload(device)
    assert (stored.app, stored.name, stored.aes_key_sealed) == (
        "android-sms-gateway",
        "Counter phone",
        None,
    )
    assert credentials.signing_key not in stored.secret_sealed
    assert signing_key(stored) == credentials.signing_key.encode()
    assert device.uuid not in credentials.signing_key


def test_the_merchants_own_signing_key_is_kept_and_a_short_one_refused(brand):
    _, credentials = create_forwarder(
        brand, "android-sms-gateway", "Spare", signing_key="my-own-key-123"
    )
    assert credentials.signing_key == "my-own-key-123"

    for bad in ("short-key12"[:11], "has a space in it", "x" * 129, "tab\tinside-key"):
        with pytest.raises(DomainError) as refused:
            create_forwarder(brand, "android-sms-gateway", "Spare", signing_key=bad)
        assert refused.value.errors[0]["field"] == "signing_key"
    assert len(brand_forwarders(brand)) == 1


def test_an_sms_to_url_forwarder_gets_a_long_header_secret_stored_as_its_hash(brand):
    device, credentials = create_forwarder(brand, "sms-to-url", "Till")

    assert credentials.header_name == SECRET_HEADER and credentials.signing_key is None
    assert len(credentials.header_value) >= 40
    stored = reload(device)
    assert stored.secret_hash == hashlib.sha256(credentials.header_value.encode()).hexdigest()
    assert stored.secret_sealed is None
    verify_forwarder_request(stored, b"{}", {SECRET_HEADER: credentials.header_value})
    with pytest.raises(DomainError) as wrong:
        verify_forwarder_request(stored, b"{}", {SECRET_HEADER: credentials.header_value + "x"})
    assert wrong.value.code == "INVALID_SECRET"


@pytest.mark.parametrize(
    ("app_name", "label", "key", "field"),
    [
        ("ownpay-console", "Phone", None, "app"),
        ("telegram", "Phone", None, "app"),
        ("sms-to-url", "   ", None, "label"),
        ("sms-to-url", "x" * 121, None, "label"),
        ("sms-to-url", "Phone", "a-signing-key-for-nothing", "signing_key"),
    ],
)
def test_bad_forwarder_requests_are_refused_with_the_field_at_fault(
    brand, app_name, label, key, field
):
    with pytest.raises(DomainError) as refused:
        create_forwarder(brand, app_name, label, signing_key=key)
    assert refused.value.errors[0]["field"] == field
    assert brand_forwarders(brand) == []


def test_forwarders_are_the_brands_phones_and_revoking_one_refuses_it_at_once(brand, other_brand):
    companion, _, _ = paired_device(brand, name="Companion")
    first, _ = create_forwarder(brand, "sms-to-url", "First")
    second, _ = create_forwarder(brand, "android-sms-gateway", "Second")
    create_forwarder(other_brand, "sms-to-url", "Theirs")

    assert [d.name for d in brand_forwarders(brand)] == ["Second", "First"]
    active, _ = list_devices(brand)
    assert {d.name for d in active} == {"Companion", "First", "Second"}

    revoke_forwarder(brand, first.uuid, "revoked by a test")
    assert [d.name for d in brand_forwarders(brand)] == ["Second"]
    with pytest.raises(DomainError) as revoked:
        intake_forwarder(first.uuid)
    assert revoked.value.code == "FORWARDER_REVOKED"
    assert intake_forwarder(second.uuid).id == second.id

    with pytest.raises(NotFound):
        revoke_forwarder(other_brand, second.uuid, "not theirs")
    with pytest.raises(NotFound):
        revoke_forwarder(brand, companion.uuid, "a companion phone is unpaired elsewhere")
    with pytest.raises(NotFound):
        intake_forwarder(companion.uuid)


def test_a_signing_key_sealed_under_a_fallback_secret_is_resealed_under_the_current_one(app, brand):
    device, credentials = create_forwarder(brand, "android-sms-gateway", "Old")
    current, fallbacks = app.config["SECRET_KEY"], app.config.get("SECRET_KEY_FALLBACKS", [])
    app.config.update(SECRET_KEY="an-older-secret-key-for-the-test", SECRET_KEY_FALLBACKS=[])
    try:
        old_seal = seal(credentials.signing_key.encode(), SIGNING_KEY_PURPOSE, device.uuid)
    finally:
        app.config.update(SECRET_KEY=current, SECRET_KEY_FALLBACKS=fallbacks)
    db.session.execute(
        db.update(type(device)).where(type(device).id == device.id).values(secret_sealed=old_seal)
    )
    db.session.commit()
    app.config["SECRET_KEY_FALLBACKS"] = ["an-older-secret-key-for-the-test"]
    try:
        assert signing_key(reload(device)) == credentials.signing_key.encode()
    finally:
        app.config["SECRET_KEY_FALLBACKS"] = fallbacks
    resealed = reload(device)
    assert resealed.secret_sealed != old_seal
    assert signing_key(resealed) == credentials.signing_key.encode()
