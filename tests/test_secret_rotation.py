"""Rotating SECRET_KEY with SECRET_KEY_FALLBACKS: during the overlap, sessions, CSRF tokens, device
tokens, pairing codes and sealed device keys from the old key keep working; once the fallback is
removed, what was not renewed stops."""

from decimal import Decimal

import pytest
from cryptography.exceptions import InvalidTag

from gateway import create_app
from gateway.accounts.models.brand import Brand
from gateway.devices.crypto import unseal_device_key
from gateway.devices.models.device import Device
from gateway.devices.pairing import create_pairing_code
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.matching import submit_claim
from tests.factories import PaymentFactory, UserFactory, bkash_text, paired_device, sms_message
from tests.panel.conftest import csrf_token, panel_client, sign_in

OLD, NEW = "old-secret-" + "o" * 40, "new-secret-" + "n" * 40
SMS, REFRESH, PAIR = (
    "/api/mobile/v1/sms",
    "/api/mobile/v1/devices/token-refreshes",
    "/api/mobile/v1/devices",
)
ACCOUNT = "/panel/account/password"


@pytest.fixture
def keyed(app):
    """An app on the suite's database with a given SECRET_KEY and fallbacks; engines disposed
    afterwards.
    """
    built = []

    def make(secret, fallbacks=()):
        served = create_app(
            {
                "APP_ENV": "testing",
                "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
                "REDIS_URL": None,
                "RATELIMIT_ENABLED": False,
                "WTF_CSRF_ENABLED": True,
                "SECRET_KEY": secret,
                "SECRET_KEY_FALLBACKS": list(fallbacks),
            }
        )
        built.append(served)
        return served

    yield make
    for served in built:
        with served.app_context():
            db.session.remove()
            db.engine.dispose()


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def forward(client, phone_tokens, aes_key, trx_id, balance="1500.00"):
    """POST one paid bKash text as the phone would; the HTTP answer."""
    message = sms_message(aes_key, bkash_text("500.00", trx_id, balance=balance))
    return client.post(
        SMS, json={"messages": [message]}, headers=bearer(phone_tokens["access_token"])
    )


def claimed_payment(brand_id, trx_id):
    """A payment of 500.00 whose customer claimed `trx_id`; its id."""
    payment = PaymentFactory(brand=db.session.get(Brand, brand_id), amount=Decimal("500.00"))
    submit_claim(payment, "bkash", trx_id)
    return payment.id


def status_of(payment_id):
    db.session.expire_all()
    return db.session.get(Payment, payment_id).status


def test_old_sessions_device_tokens_and_sealed_keys_work_during_the_overlap_and_stop_after(
    keyed, brand
):
    before, overlap, after = keyed(OLD), keyed(NEW, [OLD]), keyed(NEW)
    brand_id = (
        brand.id
    )  # read here: a row of the suite's session must not load through another app's engine
    with before.app_context():
        admin = UserFactory(brand=db.session.get(Brand, brand_id), role="super_admin")
        browser = panel_client(before)
        assert sign_in(browser, admin).status_code == 302
        form_token = csrf_token(browser)
        session_cookie = browser.get_cookie("session").value
        phone_a, tokens_a, key_a = paired_device(
            db.session.get(Brand, brand_id), name="Phone A", fingerprint="install-a"
        )
        phone_b, tokens_b, key_b = paired_device(db.session.get(Brand, brand_id), name="Phone B")
        (a_id, a_uuid), (sealed_b, b_uuid) = (
            (phone_a.id, phone_a.uuid),
            (phone_b.aes_key_sealed, phone_b.uuid),
        )
        code = create_pairing_code(db.session.get(Brand, brand_id))
        paid_during, paid_after = (
            claimed_payment(brand_id, "8N7A6B5C4D"),
            claimed_payment(brand_id, "9P8Q7R6S5T"),
        )

    with overlap.app_context():
        browser = panel_client(overlap)
        browser.set_cookie("session", session_cookie)
        assert browser.get(ACCOUNT).status_code == 200  # still signed in
        wrong_password = browser.post(
            ACCOUNT,
            data={
                "csrf_token": form_token,
                "current_password": "not it",
                "new_password": "x" * 12,
                "confirm_password": "x" * 12,
            },
        )
        assert wrong_password.status_code != 400  # the form rendered under the old key passes CSRF
        phone = overlap.test_client()
        answer = forward(phone, tokens_a, key_a, "8N7A6B5C4D")
        assert answer.status_code == 200 and answer.get_json()["data"]["accepted"] == 1
        assert status_of(paid_during) == "completed"
        key, sealed_by_new_key = unseal_device_key(
            db.session.get(Device, a_id).aes_key_sealed, a_uuid
        )
        assert (key, sealed_by_new_key) == (key_a, True)  # touched, so re-sealed under the new key
        renewed = phone.post(
            REFRESH, json={"refresh_token": tokens_a["refresh_token"], "fingerprint": "install-a"}
        )
        assert renewed.status_code == 200
        tokens_a = renewed.get_json()["data"]
        paired = phone.post(
            PAIR,
            json={
                "pairing_code": code,
                "device_id": "phone-c",
                "device_name": "Phone C",
                "fingerprint": "install-c",
            },
        )
        assert paired.status_code == 201

    with after.app_context():
        browser = panel_client(after)
        browser.set_cookie("session", session_cookie)
        assert browser.get(ACCOUNT).status_code == 302  # the old session is gone: back to sign-in
        phone = after.test_client()
        refused = forward(phone, tokens_b, key_b, "9P8Q7R6S5T")
        assert (refused.status_code, refused.get_json()["code"]) == (401, "INVALID_TOKEN")
        assert status_of(paid_after) == "processing"
        with pytest.raises(InvalidTag):
            unseal_device_key(sealed_b, b_uuid)  # never touched during the overlap: orphaned
        answer = forward(phone, tokens_a, key_a, "9P8Q7R6S5T", balance="2000.00")
        assert answer.status_code == 200 and answer.get_json()["data"]["accepted"] == 1
        assert status_of(paid_after) == "completed"


def test_a_form_signed_under_the_old_key_fails_csrf_once_the_fallback_is_removed(keyed):
    before, after = keyed(OLD), keyed(NEW)
    with before.app_context():
        browser = panel_client(before)
        form_token = csrf_token(browser, "/panel/sign-in")
        session_cookie = browser.get_cookie("session").value
    with after.app_context():
        browser = panel_client(after)
        browser.set_cookie("session", session_cookie)
        posted = browser.post(
            "/panel/sign-in", data={"email": "a@b.c", "password": "x", "csrf_token": form_token}
        )

    assert posted.status_code == 400


def test_a_form_signed_under_the_old_key_passes_csrf_during_the_overlap(keyed):
    before, overlap = keyed(OLD), keyed(NEW, [OLD])
    with before.app_context():
        browser = panel_client(before)
        form_token = csrf_token(browser, "/panel/sign-in")
        session_cookie = browser.get_cookie("session").value
    with overlap.app_context():
        browser = panel_client(overlap)
        browser.set_cookie("session", session_cookie)
        posted = browser.post(
            "/panel/sign-in", data={"email": "a@b.c", "password": "x", "csrf_token": form_token}
        )

    assert (
        posted.status_code == 200
    )  # the form answered (wrong password), not refused as a CSRF failure
