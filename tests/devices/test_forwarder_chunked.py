"""SMS to URL Forwarder streams its body chunked (HttpURLConnection.setChunkedStreamingMode, no
Content-Length): such a body reaches the intake on a real server, and one over the limit is 413."""

import json
from decimal import Decimal

import pytest

from gateway.devices.forwarders import create_forwarder
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import PaymentFactory, bkash_text
from tests.forwarder_apps import sms_to_url_body
from tests.gunicorn_support import Gunicorn
from tests.security.test_request_limits import LIMIT, chunked_post

TRX = "8N7A6B5C4D"


@pytest.fixture
def gunicorn_server(app, tmp_path):
    """The real app under gunicorn (app:app, as deployed), sharing the test database."""
    server = Gunicorn(
        "app:app",
        {
            "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": "",
            "APP_ENV": "development",
        },
        log_path=tmp_path / "gunicorn.log",
    )
    yield server
    server.stop()


@pytest.fixture
def till(brand):
    """An SMS to URL forwarder: (its path, the app's headers but Content-Type)."""
    device, credentials = create_forwarder(brand, "sms-to-url", "Till")
    path = "/" + credentials.url.split("://", 1)[1].split("/", 1)[1]
    return path, {
        "User-agent": "SMS Forwarder App",
        credentials.header_name: credentials.header_value,
    }


def stored():
    db.session.expire_all()
    return db.session.execute(db.select(InboundSms)).scalars().all()


def test_a_chunked_post_without_content_length_pays_under_gunicorn(gunicorn_server, brand, till):
    path, headers = till
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)

    status, _, answer = chunked_post(
        gunicorn_server.url, path, headers, sms_to_url_body(bkash_text("500.00", TRX)), chunk=7
    )

    assert status == 200, answer[:300]
    assert json.loads(answer)["data"]["status"] == "accepted"
    [sms] = stored()
    assert sms.status == "matched"
    assert db.session.get(Payment, payment.id).status == "completed"


def test_a_chunked_post_over_the_limit_is_413_under_gunicorn(gunicorn_server, till):
    path, headers = till
    body = sms_to_url_body("z" * (LIMIT + 10))

    status, _, answer = chunked_post(gunicorn_server.url, path, headers, body)

    assert status == 413, answer[:300]
    assert json.loads(answer)["code"] == "PAYLOAD_TOO_LARGE"
    assert stored() == []


def test_a_chunked_post_reaches_the_intake_on_the_werkzeug_server(live_server, till):
    path, headers = till

    status, _, answer = chunked_post(live_server, path, headers, sms_to_url_body(bkash_text()), 5)

    assert status == 200, answer[:300]
    assert len(stored()) == 1
