"""A hand redelivery (API or panel) is extra: the automatic retry schedule and its budget carry on
unchanged.
"""

from datetime import timedelta

from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.webhooks.delivery import MAX_ATTEMPTS, RETRY, deliver_webhook
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from tests.factories import completed_payment
from tests.webhook_support import receiver  # noqa: F401 - fixture


def the_delivery():
    db.session.expire_all()
    return db.session.execute(db.select(WebhookDelivery)).scalar_one()


def attempt_statuses():
    return (
        db.session.execute(db.select(WebhookAttempt.response_status).order_by(WebhookAttempt.id))
        .scalars()
        .all()
    )


def redeliver(client, auth, delivery_id):
    response = client.post(f"/api/v1/webhooks/deliveries/{delivery_id}/retry", headers=auth)
    assert response.status_code == 202
    return deliver_webhook(delivery_id)


def test_a_failed_hand_redelivery_goes_back_to_the_automatic_attempt_that_was_due(
    client, auth, brand, receiver
):
    receiver.plan = [500, 500]
    with freeze_time(utcnow()) as clock:
        start = utcnow()
        completed_payment(brand=brand, callback_url=receiver.url)
        delivery_id = the_delivery().id
        assert deliver_webhook(delivery_id) == "pending"
        clock.tick(timedelta(seconds=10))

        assert redeliver(client, auth, delivery_id) == "pending"
        delivery = the_delivery()
        assert (delivery.attempts, delivery.manual_attempts) == (2, 1)
        assert delivery.next_attempt_at == start + RETRY.delays[0], "the automatic schedule moved"
        assert deliver_webhook(delivery_id) is None, "attempted before the automatic retry was due"

        clock.tick(RETRY.delays[0])
        assert deliver_webhook(delivery_id) == "sent"
    assert attempt_statuses() == [500, 500, 200]
    assert (the_delivery().status, the_delivery().attempts) == ("sent", 3)


def test_hand_redeliveries_leave_every_automatic_attempt_to_the_schedule(
    client, auth, brand, receiver
):
    receiver.plan = [500] * (MAX_ATTEMPTS + 3)
    with freeze_time(utcnow()) as clock:
        completed_payment(brand=brand, callback_url=receiver.url)
        delivery_id = the_delivery().id
        assert deliver_webhook(delivery_id) == "pending"
        for _ in range(3):  # three impatient merchants press "redeliver" before the first retry
            assert redeliver(client, auth, delivery_id) == "pending"
        automatic = 1
        while the_delivery().log_status == "retrying":
            clock.move_to(the_delivery().next_attempt_at)
            deliver_webhook(delivery_id)
            automatic += 1

    delivery = the_delivery()
    assert automatic == MAX_ATTEMPTS
    assert (delivery.status, delivery.attempts, delivery.manual_attempts) == (
        "failed",
        MAX_ATTEMPTS + 3,
        3,
    )
    assert len(attempt_statuses()) == MAX_ATTEMPTS + 3


def test_a_failed_hand_redelivery_of_a_failed_delivery_stays_failed(client, auth, brand, receiver):
    receiver.plan = [500]
    completed_payment(brand=brand, callback_url=receiver.url)
    delivery = the_delivery()
    delivery.status, delivery.attempts, delivery.next_attempt_at = "failed", MAX_ATTEMPTS, None
    db.session.commit()

    assert redeliver(client, auth, delivery.id) == "failed"
    delivery = the_delivery()
    assert (
        delivery.status,
        delivery.attempts,
        delivery.manual_attempts,
        delivery.next_attempt_at,
    ) == ("failed", MAX_ATTEMPTS + 1, 1, None)
