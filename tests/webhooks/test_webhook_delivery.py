"""Sending webhooks through RQ to a real receiver: signatures, retries on schedule, claims,
limits."""

import json
import socket
import threading
from datetime import timedelta

import pytest
from freezegun import freeze_time
from sqlalchemy import event, text

from gateway import jobs
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.outbox.kind import wake_key
from gateway.outbox.sweep import sweep_outbox
from gateway.webhooks.delivery import ABANDONED, OUTBOX, RETRY, deliver_webhook
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import PaymentFactory, completed_payment
from tests.webhook_support import drain_queues, receiver, rq_redis  # noqa: F401,F811 - fixtures


def the_delivery():
    db.session.expire_all()
    return db.session.execute(db.select(WebhookDelivery)).scalar_one()


def attempts_of(delivery):
    return (
        db.session.execute(
            db.select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id == delivery.id)
            .order_by(WebhookAttempt.id)
        )
        .scalars()
        .all()
    )


def test_completed_payment_webhook_arrives_signed_with_the_stored_body(brand, receiver, rq_redis):
    payment = completed_payment(brand=brand, callback_url=receiver.url)
    drain_queues()

    assert receiver.wait_for(1)
    [hit] = receiver.received
    delivery = the_delivery()
    assert hit["raw"] == delivery.payload.encode()
    assert hit["json"]["event"] == "payment.completed"
    assert hit["json"]["data"]["payment_id"] == payment.public_id
    assert hit["json"]["data"]["trx_id"] == payment.transaction.trx_id
    assert hit["headers"]["X-Service-Event"] == "payment.completed"
    assert hit["headers"]["X-Service-Delivery"] == str(delivery.id)
    assert hit["headers"]["Content-Type"] == "application/json"
    assert (
        delivery.status,
        delivery.attempts,
        delivery.response_status,
        delivery.response_body,
    ) == ("sent", 1, 200, "OK")


def test_receiver_failing_once_gives_one_record_with_two_attempts(brand, receiver, rq_redis):
    receiver.plan = [500]
    with freeze_time(utcnow()) as clock:
        completed_payment(brand=brand, callback_url=receiver.url)
        drain_queues()
        assert the_delivery().log_status == "retrying"
        clock.tick(RETRY.delays[0] + timedelta(seconds=1))
        sweep_outbox()
        drain_queues()

    delivery = the_delivery()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("sent", 2, 200)
    assert [a.response_status for a in attempts_of(delivery)] == [500, 200]
    assert len(receiver.received) == 2
    assert receiver.received[0]["raw"] == receiver.received[1]["raw"]


@pytest.fixture
def silent_endpoint():
    """A listening socket that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(32)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hooks"


def test_receiver_that_never_answers_is_retried_on_schedule_then_failed(
    app, brand, rq_redis, silent_endpoint, monkeypatch
):
    monkeypatch.setitem(app.config, "WEBHOOK_TIMEOUT", 0.2)
    with freeze_time(utcnow()) as clock:
        completed_payment(brand=brand, callback_url=silent_endpoint)
        drain_queues()
        for delay in RETRY.delays:
            clock.tick(delay - timedelta(seconds=1))
            sweep_outbox()
            drain_queues()
            assert the_delivery().attempts == RETRY.delays.index(delay) + 1, (
                "attempted before it was due"
            )
            clock.tick(timedelta(seconds=1))
            sweep_outbox()
            drain_queues()

    delivery = the_delivery()
    log = attempts_of(delivery)
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("failed", 8, None)
    assert len(log) == 8
    assert [
        later.attempted_at - earlier.attempted_at for earlier, later in zip(log, log[1:])
    ] == list(RETRY.delays)
    assert all(a.error and a.response_status is None for a in log)


def test_the_same_delivery_enqueued_twice_is_sent_once(brand, receiver, rq_redis):
    completed_payment(brand=brand, callback_url=receiver.url)
    delivery = the_delivery()
    jobs.enqueue(jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, delivery.id)
    jobs.enqueue(jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, delivery.id)
    sweep_outbox()
    drain_queues()

    assert len(receiver.received) == 1
    assert the_delivery().attempts == 1


def test_racing_workers_send_each_attempt_once(app, brand, receiver):
    completed_payment(brand=brand, callback_url=receiver.url)
    delivery_id = the_delivery().id
    start = threading.Barrier(4)
    results = []

    def worker():
        with app.app_context():
            start.wait()
            results.append(deliver_webhook(delivery_id))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results, key=str) == [None, None, None, "sent"]
    assert len(receiver.received) == 1
    assert the_delivery().attempts == 1


def test_a_second_process_cannot_claim_a_leased_delivery(brand, receiver):
    completed_payment(brand=brand, callback_url=receiver.url)
    delivery = the_delivery()
    delivery.lease_expires_at = utcnow() + timedelta(seconds=60)
    db.session.commit()

    assert deliver_webhook(delivery.id) is None
    assert receiver.received == []


def test_a_lease_left_by_a_crashed_process_is_taken_over(brand, receiver):
    with freeze_time(utcnow()) as clock:
        completed_payment(brand=brand, callback_url=receiver.url)
        delivery = the_delivery()
        delivery.attempts, delivery.lease_expires_at = 1, utcnow() + timedelta(seconds=60)
        db.session.commit()
        clock.tick(timedelta(seconds=61))
        sweep_outbox()  # no Redis: the in-process executor is off in tests, so deliver by hand
        assert deliver_webhook(delivery.id) == "sent"

    delivery = the_delivery()
    assert (delivery.status, delivery.attempts) == ("sent", 2)
    assert [(a.error, a.response_status) for a in attempts_of(delivery)] == [
        (ABANDONED, None),
        (None, 200),
    ]


def set_on_connection(dbapi_connection, statement):
    """A session-level SET (or RESET) on a raw pooled connection, in a transaction of its own."""
    with dbapi_connection.cursor() as cursor:
        cursor.execute(statement)
    dbapi_connection.commit()


@pytest.fixture
def durable_commits():
    """Commits that wait for the disk unless the gateway says otherwise, as on a production server
    (`make test` runs PostgreSQL with synchronous_commit off: PGOPTIONS in the Makefile)."""

    def on_checkout(dbapi_connection, record, proxy):
        set_on_connection(dbapi_connection, "SET synchronous_commit TO on")

    def on_checkin(dbapi_connection, record):
        if dbapi_connection is not None:
            set_on_connection(dbapi_connection, "RESET synchronous_commit")

    event.listen(db.engine, "checkout", on_checkout)
    event.listen(db.engine, "checkin", on_checkin)
    yield
    event.remove(db.engine, "checkout", on_checkout)
    event.remove(db.engine, "checkin", on_checkin)


@pytest.mark.parametrize("abandoned", [False, True], ids=["fresh claim", "claim after a crash"])
def test_on_postgresql_only_the_claim_commits_without_waiting_for_the_disk(
    brand, receiver, abandoned, durable_commits
):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")
    completed_payment(brand=brand, callback_url=receiver.url)
    delivery = the_delivery()
    if abandoned:
        delivery.attempts, delivery.lease_expires_at = 1, utcnow() - timedelta(seconds=1)
    db.session.commit()
    commits = []

    def note_setting(session):
        commits.append(session.execute(text("SHOW synchronous_commit")).scalar_one())

    event.listen(db.session, "before_commit", note_setting)
    try:
        assert deliver_webhook(delivery.id) == "sent"
    finally:
        event.remove(db.session, "before_commit", note_setting)
    # The claim may be lost in a crash (the attempt is then made again); the result never is.
    assert commits == ["off", "on"]
    assert db.session.execute(text("SHOW synchronous_commit")).scalar_one() == "on"


def test_redirects_are_not_followed_and_bodies_are_capped(brand, receiver, httpserver):
    httpserver.expect_request("/moved").respond_with_data(
        "", status=302, headers={"Location": receiver.url}
    )
    httpserver.expect_request("/big").respond_with_data("x" * 100_000, status=200)
    for path in ("/moved", "/big"):
        completed_payment(brand=brand, callback_url=httpserver.url_for(path))
    for delivery in db.session.execute(
        db.select(WebhookDelivery).order_by(WebhookDelivery.id)
    ).scalars():
        deliver_webhook(delivery.id)

    moved, big = (
        db.session.execute(db.select(WebhookDelivery).order_by(WebhookDelivery.id)).scalars().all()
    )
    assert (moved.status, moved.response_status) == ("pending", 302)
    assert receiver.received == []
    assert (big.status, len(big.response_body)) == ("sent", 2048)


def test_private_callback_is_refused_at_delivery_when_not_allowed(
    app, brand, receiver, monkeypatch
):
    completed_payment(brand=brand, callback_url=receiver.url)
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    deliver_webhook(the_delivery().id)

    delivery = the_delivery()
    assert receiver.received == []
    assert delivery.log_status == "retrying"
    assert "private" in attempts_of(delivery)[0].error


def test_a_rotated_secret_signs_the_next_attempt(brand, receiver, runner):
    payment = PaymentFactory(brand=brand, callback_url=receiver.url)
    result = runner.invoke(args=["gateway", "rotate-webhook-secret"])
    new_secret = result.output.strip().splitlines()[-1]
    db.session.expire_all()
    assert new_secret.startswith("whsec_") and new_secret == brand.webhook_secret
    receiver.secret = new_secret
    from gateway.payments.lifecycle import complete_payment

    complete_payment(payment)
    deliver_webhook(the_delivery().id)

    assert len(receiver.received) == 1
    assert json.loads(the_delivery().payload)["event"] == "payment.completed"


def scheduled_wakeups(redis):
    """(args, score) of every wake-up in the webhooks queue's RQ schedule."""
    from rq.job import Job
    from rq.registry import ScheduledJobRegistry

    registry = ScheduledJobRegistry(jobs.WEBHOOKS, connection=redis)
    return [
        (Job.fetch(job_id, connection=redis).args, int(redis.zscore(registry.key, job_id)))
        for job_id in registry.get_job_ids()
    ]


def test_a_retry_scheduled_at_a_fraction_of_a_second_is_made_when_due_not_minutes_late(
    brand, receiver, rq_redis
):
    receiver.plan = [500]
    start = utcnow().replace(microsecond=500_000)
    with freeze_time(start) as clock:
        completed_payment(brand=brand, callback_url=receiver.url)
        drain_queues()
        due = the_delivery().next_attempt_at
        assert due == start + RETRY.delays[0]
        clock.tick(RETRY.delays[0] - timedelta(seconds=0.5))  # the whole second before the due time
        sweep_outbox()
        drain_queues()
        assert the_delivery().attempts == 1, "attempted before it was due"
        clock.tick(timedelta(seconds=0.5))
        sweep_outbox()
        drain_queues()

    delivery = the_delivery()
    assert (delivery.status, delivery.attempts) == ("sent", 2)
    assert [a.attempted_at for a in attempts_of(delivery)] == [start, due]


def test_scheduled_retry_is_rounded_up_to_the_next_whole_second(brand, rq_redis):
    when = utcnow().replace(microsecond=1) + timedelta(minutes=1)
    jobs.enqueue_at(when, jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, 7, 1, unique="delivery:evt_x:1")
    [(args, score)] = scheduled_wakeups(rq_redis)
    assert args == (jobs.DELIVER_WEBHOOK, 7, 1)
    assert score == int(when.timestamp()) + 1


def retrying_delivery(brand, url, attempts, next_attempt_at, lease_expires_at=None):
    completed_payment(brand=brand, callback_url=url)
    delivery = the_delivery()
    delivery.status, delivery.attempts = "pending", attempts
    delivery.next_attempt_at, delivery.lease_expires_at = next_attempt_at, lease_expires_at
    db.session.commit()
    return delivery


def test_an_early_wakeup_frees_its_key_so_the_sweep_wakes_the_delivery_when_due(
    brand, receiver, rq_redis
):
    with freeze_time(utcnow()) as clock:
        delivery = retrying_delivery(brand, receiver.url, 1, utcnow() + timedelta(seconds=30))
        rq_redis.flushdb()
        unique = wake_key(OUTBOX, delivery.id, delivery.created_at, 1)
        jobs.enqueue(
            jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, delivery.id, unique=unique
        )  # a wake-up too early
        drain_queues()
        assert receiver.received == [] and the_delivery().attempts == 1
        assert not rq_redis.exists(f"gateway:wake:{unique}")
        clock.tick(timedelta(seconds=30))
        assert sweep_outbox() == 1
        drain_queues()

    assert len(receiver.received) == 1
    assert (the_delivery().status, the_delivery().attempts) == ("sent", 2)


def test_a_scheduled_retry_that_fires_early_is_scheduled_again_at_its_due_time(
    brand, receiver, rq_redis
):
    due = utcnow().replace(microsecond=250_000) + timedelta(seconds=30)
    delivery = retrying_delivery(brand, receiver.url, 1, due)
    rq_redis.flushdb()

    assert deliver_webhook(delivery.id, 1) is None
    assert receiver.received == []
    assert scheduled_wakeups(rq_redis) == [
        ((jobs.DELIVER_WEBHOOK, delivery.id, 1), int(due.timestamp()) + 1)
    ]


def test_a_stale_scheduled_retry_that_fires_early_is_not_scheduled_again(brand, receiver, rq_redis):
    delivery = retrying_delivery(brand, receiver.url, 2, utcnow() + timedelta(minutes=5))
    rq_redis.flushdb()

    assert (
        deliver_webhook(delivery.id, 1) is None
    )  # scheduled for attempt 2, which has already been made
    assert scheduled_wakeups(rq_redis) == []


def test_a_retrying_delivery_that_used_every_attempt_is_failed_not_attempted_again(brand, receiver):
    now = utcnow()
    delivery = retrying_delivery(
        brand,
        receiver.url,
        8,
        now - timedelta(minutes=2),
        lease_expires_at=now - timedelta(minutes=1),
    )  # the 8th attempt was abandoned

    assert deliver_webhook(delivery.id) is None  # a wake-up does not attempt it again
    assert sweep_outbox() == 0  # the sweep fails it, and wakes nothing
    delivery = the_delivery()
    assert receiver.received == []
    assert (
        delivery.status,
        delivery.attempts,
        delivery.next_attempt_at,
        delivery.lease_expires_at,
    ) == ("failed", 8, None, None)
    assert [(a.error, a.attempted_at) for a in attempts_of(delivery)] == [
        (ABANDONED, now - timedelta(minutes=1))
    ]
    assert sweep_outbox() == 0


def test_a_delivery_at_the_attempt_cap_with_a_live_lease_is_left_to_its_attempt(brand, receiver):
    now = utcnow()
    delivery = retrying_delivery(
        brand,
        receiver.url,
        8,
        now - timedelta(seconds=5),
        lease_expires_at=now + timedelta(seconds=55),
    )

    assert deliver_webhook(delivery.id) is None
    assert receiver.received == []
    assert (the_delivery().status, the_delivery().attempts) == ("pending", 8)


def test_nul_bytes_in_a_response_body_and_error_are_stripped_before_storing(
    brand, httpserver, monkeypatch
):
    httpserver.expect_request("/nul").respond_with_data("bad\x00answer", status=500)
    completed_payment(brand=brand, callback_url=httpserver.url_for("/nul"))
    assert deliver_webhook(the_delivery().id) == "pending"

    delivery = the_delivery()
    assert (delivery.response_status, delivery.response_body) == (500, "badanswer")
    assert attempts_of(delivery)[0].response_body == "badanswer"

    from gateway.webhooks import delivery as webhooks
    from gateway.webhooks.transport import Outcome

    monkeypatch.setattr(
        webhooks, "post_webhook", lambda claim: Outcome(error="Could not connect: \x00oops")
    )
    delivery.next_attempt_at = utcnow()
    db.session.commit()
    assert deliver_webhook(delivery.id) == "pending"
    assert attempts_of(the_delivery())[1].error == "Could not connect: oops"
