"""Redis stopped under a running app: every request path still answers, limits still count (in the
database, across processes), one warning per outage, /healthz says degraded; Redis back empty,
wake-ups resume."""

import logging
import threading

import pytest
from rq import Queue

from gateway import create_app, jobs
from gateway.extensions import db
from gateway.outbox.sweep import sweep_outbox
from gateway.payments.lifecycle import complete_payment
from gateway.payments.models.payment import Payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import submit_trx_id
from tests.factories import (
    PaymentFactory,
    PaymentMethodFactory,
    bkash_text,
    paired_device,
    sms_message,
)
from tests.panel.conftest import csrf_token
from tests.redis_server import own_redis  # noqa: F401 - fixture

CALLBACK = "https://merchant.example/hooks"
TRX = "8N7A6B5C4D"


@pytest.fixture
def app_on_redis(app, own_redis):
    """Build apps like the suite's (same database), on the test's own Redis with rate limits on."""
    built = []

    def build(**settings):
        other = create_app(
            {
                "APP_ENV": "testing",
                "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
                "REDIS_URL": own_redis.url,
                "RATELIMIT_ENABLED": True,
                "WTF_CSRF_ENABLED": True,
                "SERVER_NAME": None,
                **settings,
            }
        )
        built.append(other)
        return other

    yield build
    for other in built:
        with other.app_context():
            db.session.remove()
            db.engine.dispose()


def redis_warnings(caplog):
    return [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.WARNING and "Redis" in record.getMessage()
    ]


def failed_sign_in(client):
    token = csrf_token(client, "/panel/sign-in")
    return client.post(
        "/panel/sign-in",
        data={"email": "nobody@shop.test", "password": "wrong", "csrf_token": token},
    )


def test_every_request_path_answers_while_redis_is_down_and_limits_count_across_apps(
    app_on_redis, own_redis, brand, make_key, caplog
):
    first, second = (
        app_on_redis(LOGIN_RATE_LIMIT="3/minute", API_RATE_LIMIT="8/minute") for _ in range(2)
    )
    clients = [first.test_client(), second.test_client()]
    auth = make_key(brand)
    method = PaymentMethodFactory(brand=brand, number="01712345678")
    device, tokens, aes_key = paired_device(brand)
    own_redis.kill()

    with caplog.at_level(logging.WARNING):
        created = clients[0].post(
            "/api/v1/payments",
            headers=auth,
            json={"amount": "500.00", "currency": "BDT", "callback_url": CALLBACK},
        )
        assert created.status_code == 201, created.get_json()
        payment_id = created.get_json()["data"]["payment_id"]
        assert clients[1].get(f"/api/v1/payments/{payment_id}", headers=auth).status_code == 200
        assert clients[0].get("/api/v1/webhooks/deliveries", headers=auth).status_code == 200

        payment = db.session.execute(
            db.select(Payment).where(Payment.public_id == payment_id)
        ).scalar_one()
        claimed = submit_trx_id(clients[1], payment, method, trx_id=TRX)
        assert claimed.status_code == 303
        ingest = clients[0].post(
            "/api/mobile/v1/sms",
            headers={"Authorization": f"Bearer {tokens['access_token']}"},
            json={"messages": [sms_message(aes_key, bkash_text(trx_id=TRX))]},
        )
        assert ingest.status_code == 200, ingest.get_json()
        db.session.expire_all()
        assert db.session.get(Payment, payment.id).status == "completed"
        # The completion's webhook is recorded; its wake-up was skipped, left to the sweep.
        assert db.session.execute(db.select(WebhookDelivery.status)).scalars().all() == ["pending"]

        # Sign-in: 3 failures a minute per address and e-mail, counted together by both apps in the
        # database.
        assert [failed_sign_in(clients[n % 2]).status_code for n in range(4)] == [
            200,
            200,
            200,
            429,
        ]
        # The API key's limit (8 a minute): 3 requests above, 5 more allowed, the 9th refused,
        # whichever app.
        statuses = [
            clients[n % 2].get(f"/api/v1/payments/{payment_id}", headers=auth).status_code
            for n in range(6)
        ]
        assert statuses == [200] * 5 + [429]

        for client in clients:
            health = client.get("/healthz")
            assert health.status_code == 200
            assert health.get_json() == {
                "status": "degraded",
                "database": "ok",
                "redis": "degraded",
            }

    warnings = redis_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert "unreachable" in warnings[0] and "the sweep will pick them up" in warnings[0]


def wait_for_redis_ok(client):
    """Poll /healthz until it reports Redis answering again (the outage's pause between tries has
    passed).
    """
    pause = threading.Event()
    for _ in range(100):
        if client.get("/healthz").get_json()["redis"] == "ok":
            return True
        pause.wait(0.1)
    return False


def test_wakeups_resume_when_redis_comes_back_empty(app_on_redis, own_redis, brand, caplog):
    served = app_on_redis()
    client = served.test_client()
    before, after = (PaymentFactory(brand=brand, callback_url=CALLBACK).id for _ in range(2))
    assert client.get("/healthz").get_json() == {"status": "ok", "database": "ok", "redis": "ok"}
    own_redis.kill()

    # Rows are read in the served app's own session: the suite's session would hold its connection.
    with caplog.at_level(logging.WARNING), served.app_context():
        complete_payment(db.session.get(Payment, before))  # committed; its wake-up is skipped
        own_redis.start()  # empty: no job, no wake-up key survived
        assert wait_for_redis_ok(client)
        complete_payment(db.session.get(Payment, after))
        queue = Queue(jobs.WEBHOOKS, connection=own_redis.client())
        assert [job.args[1] for job in queue.jobs] == [delivery_of(after)]
        assert (
            sweep_outbox() == 2
        )  # the sweep wakes the one the outage skipped; the other is already on its way
        assert sorted(job.args[1] for job in queue.jobs) == sorted(
            [delivery_of(before), delivery_of(after)]
        )

    warnings = redis_warnings(caplog)
    assert len(warnings) == 2, warnings  # one when it went, one when it came back
    assert "unreachable" in warnings[0] and "answers again" in warnings[1]


def delivery_of(payment_id):
    return db.session.execute(
        db.select(WebhookDelivery.id).where(WebhookDelivery.payment_id == payment_id)
    ).scalar_one()


def test_healthz_without_redis_configured_reports_it_as_such(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok", "redis": "not_configured"}
