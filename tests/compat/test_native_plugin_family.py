"""The native API's own plugins: the webhook signature also under X-Signature/X-Timestamp, and
`fee`.
"""

import hashlib
import hmac
import time

from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.compat.conftest import P2_HEADER, deliver_ipns
from tests.compat.ipn_receiver import IpnReceiver, header
from tests.compat.test_compat_errors import P2_BODY
from tests.factories import completed_payment


def test_a_native_webhook_verifies_under_x_signature_and_x_timestamp(brand, ipn_receiver):
    payment = completed_payment(brand=brand, callback_url=ipn_receiver.url)
    [delivery_id] = db.session.execute(db.select(WebhookDelivery.id)).scalars()
    deliver_webhook(delivery_id)
    assert ipn_receiver.wait_for(1)
    [hit] = ipn_receiver.received
    expected = hmac.new(brand.webhook_secret.encode(), hit["raw"], hashlib.sha256).hexdigest()
    assert header(hit, "X-Signature") == expected == header(hit, "X-Service-Signature")
    timestamp = header(hit, "X-Timestamp")
    assert timestamp == header(hit, "X-Service-Timestamp")
    assert abs(time.time() - int(timestamp)) < 300
    assert hit["json"]["data"]["payment_id"] == payment.public_id


def test_payments_and_transactions_carry_a_fee_of_zero(client, auth, brand):
    payment = completed_payment(brand=brand)
    read = client.get(f"/api/v1/payments/{payment.public_id}", headers=auth).get_json()["data"]
    assert read["fee"] == "0.00"
    listed = client.get("/api/v1/payments", headers=auth).get_json()["data"]
    assert [item["fee"] for item in listed] == ["0.00"]
    trx = client.get(f"/api/v1/transactions/{read['trx_id']}", headers=auth).get_json()["data"]
    assert trx["fee"] == "0.00"
    spec = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
    assert spec["Payment"]["properties"]["fee"]["type"] == "string"
    assert spec["Transaction"]["properties"]["fee"]["type"] == "string"


def test_a_failed_ipn_is_retried_and_logged_like_any_webhook(client, compat_key):
    failing = IpnReceiver(answer_status=500, answer_body=b"try later")
    try:
        secret = compat_key("piprapay2")
        body = {**P2_BODY, "webhook_url": failing.url}
        pp_id = client.post(
            "/api/create-charge", json=body, headers={P2_HEADER: secret}
        ).get_json()["pp_id"]
        from gateway.payments.lifecycle import complete_payment
        from tests.compat.conftest import compat_row

        complete_payment(compat_row(pp_id).payment, provider="bkash", provider_trx_id="AB12CD34EF")
        [ipn] = deliver_ipns(failing, 1)
        assert header(ipn, P2_HEADER) == secret
        db.session.expire_all()
        delivery = db.session.execute(db.select(WebhookDelivery)).scalar_one()
        assert (delivery.event, delivery.log_status, delivery.attempts) == (
            "compat.piprapay2",
            "retrying",
            1,
        )
        [attempt] = db.session.execute(db.select(WebhookAttempt)).scalars()
        assert (attempt.response_status, attempt.response_body) == (500, "try later")
        assert delivery.payload.encode() == ipn["raw"]
    finally:
        failing.close()
