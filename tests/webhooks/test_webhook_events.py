"""Events: every transition records its delivery in the same transaction, with one body shape."""

import json
from decimal import Decimal

import pytest

from gateway.domain_errors import DomainError
from gateway.extensions import db
from gateway.payments.lifecycle import (
    cancel_payment,
    complete_payment,
    expire_due_payments,
    fail_payment,
)
from gateway.payments.models.payment import Payment
from gateway.payments.refunds import create_refund
from gateway.webhooks.events import emit_event
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, completed_payment

CALLBACK = "https://merchant.example/hooks"


def deliveries():
    return (
        db.session.execute(db.select(WebhookDelivery).order_by(WebhookDelivery.id)).scalars().all()
    )


def body_of(delivery):
    return json.loads(delivery.payload)


def test_completed_payment_records_a_delivery_with_the_spec_body(brand):
    payment = PaymentFactory(
        brand=brand, callback_url=CALLBACK, reference="ORDER-7", metadata_json={"cart": "42"}
    )
    transaction = complete_payment(payment, provider="bkash", provider_trx_id="BK1")

    [delivery] = deliveries()
    body = body_of(delivery)
    assert set(body) == {"id", "event", "created", "livemode", "data"}
    assert body["id"].startswith("evt_") and body["id"] == delivery.event_id
    assert body["event"] == delivery.event == "payment.completed"
    assert body["data"] == {
        "payment_id": payment.public_id,
        "trx_id": transaction.trx_id,
        "reference": "ORDER-7",
        "status": "completed",
        "amount": "500.00",
        "currency": "BDT",
        "amount_bdt": "500.00",
        "exchange_rate": None,
        "metadata": {"cart": "42"},
        "fee": "0.00",
        "amount_paid": "500.00",
    }
    assert (delivery.url, delivery.status, delivery.attempts) == (CALLBACK, "pending", 0)
    assert (delivery.payment_id, delivery.transaction_id, delivery.brand_id) == (
        payment.id,
        transaction.id,
        brand.id,
    )
    assert delivery.next_attempt_at is not None


def test_brand_webhook_url_is_used_without_a_callback_url(brand):
    brand.webhook_url = "https://brand.example/webhooks"
    db.session.commit()
    completed_payment(brand=brand)
    assert [d.url for d in deliveries()] == ["https://brand.example/webhooks"]


def test_no_delivery_is_recorded_without_any_url(brand):
    completed_payment(brand=brand)
    assert deliveries() == []


def test_cancel_expire_and_fail_each_emit_their_event(brand):
    cancelled = PaymentFactory(brand=brand, callback_url=CALLBACK)
    cancel_payment(cancelled)
    expiring = PaymentFactory(brand=brand, callback_url=CALLBACK)
    expiring.expires_at = expiring.created_at
    db.session.commit()
    expire_due_payments()
    failing = PaymentFactory(brand=brand, callback_url=CALLBACK, status="processing")
    fail_payment(failing, "amount does not match")

    assert [(d.event, d.payment_id, body_of(d)["data"]["status"]) for d in deliveries()] == [
        ("payment.cancelled", cancelled.id, "cancelled"),
        ("payment.expired", expiring.id, "expired"),
        ("payment.failed", failing.id, "failed"),
    ]
    assert db.session.get(Payment, failing.id).review_reason == "amount does not match"


def test_fail_payment_refuses_a_payment_that_is_not_processing(brand):
    payment = PaymentFactory(brand=brand, callback_url=CALLBACK)
    with pytest.raises(DomainError) as error:
        fail_payment(payment, "no")
    assert error.value.code == "INVALID_STATE"
    assert deliveries() == []


def test_refund_completed_carries_the_refund_and_what_was_refunded(brand):
    payment = completed_payment(brand=brand, callback_url=CALLBACK)
    refund = create_refund(brand, payment.transaction.trx_id, Decimal("200.00"), "damaged")

    delivery = deliveries()[-1]
    data = body_of(delivery)["data"]
    assert delivery.event == "refund.completed"
    assert data["status"] == "partially_refunded"
    assert data["amount_refunded"] == "200.00"
    assert data["trx_id"] == payment.transaction.trx_id
    assert data["refund"]["id"] == refund.id
    assert (data["refund"]["amount"], data["refund"]["reason"]) == ("200.00", "damaged")


def test_the_delivery_row_rolls_back_with_the_state_change(brand):
    payment = PaymentFactory(brand=brand, callback_url=CALLBACK)
    emit_event("payment.cancelled", brand, payment=payment)
    db.session.rollback()
    assert deliveries() == []


def test_a_lost_race_records_no_event(brand):
    payment = PaymentFactory(brand=brand, callback_url=CALLBACK)
    stale = db.session.get(Payment, payment.id)
    cancel_payment(payment)
    with pytest.raises(DomainError):
        complete_payment(stale)
    assert [d.event for d in deliveries()] == ["payment.cancelled"]
