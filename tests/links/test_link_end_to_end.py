"""A link paid end to end: API → /pay/<slug> → checkout claim → SMS → completed →
payment_link.paid."""

import re

from gateway.extensions import db
from gateway.links.models.link import PaymentLink
from gateway.payments.models.payment import Payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import simulate_sms, submit_trx_id
from tests.factories import PaymentMethodFactory
from tests.links.support import submit_link
from tests.webhook_support import drain_queues, receiver, rq_redis  # noqa: F401 - fixtures


def test_a_link_is_paid_end_to_end_and_its_webhook_arrives(
    client, runner, auth, brand, receiver, rq_redis
):
    bkash = PaymentMethodFactory(brand=brand, number="01712345678")
    created = client.post(
        "/api/v1/payment-links",
        json={
            "title": "Eid hamper",
            "amount": "1500.00",
            "slug": "eid-hamper",
            "callback_url": receiver.url,
            "custom_fields": [
                {"kind": "name", "required": True},
                {"kind": "address", "label": "Where to deliver", "required": True},
            ],
        },
        headers=auth,
    )
    assert created.status_code == 201
    link = created.get_json()["data"]
    assert link["url"].endswith("/pay/eid-hamper")

    answered = submit_link(client, _link(), name="Nasrin", address="House 7, Dhaka")
    assert answered.status_code == 303
    checkout = answered.headers["Location"]
    token = re.search(r"/checkout/([^/?]+)$", checkout).group(1)
    payment = db.session.execute(db.select(Payment).where(Payment.token == token)).scalar_one()

    claimed = submit_trx_id(client, payment, bkash, trx_id="9A7B6C5D4E")
    assert claimed.status_code == 303
    simulate_sms(runner, "9A7B6C5D4E", amount="1500.00")
    drain_queues()

    db.session.expire_all()
    payment = db.session.get(Payment, payment.id)
    assert payment.status == "completed"
    assert receiver.wait_for(2)
    by_event = {item["json"]["event"]: item for item in receiver.received}
    assert set(by_event) == {"payment.completed", "payment_link.paid"}
    paid = by_event["payment_link.paid"]
    assert paid["headers"]["X-Service-Event"] == "payment_link.paid"
    data = paid["json"]["data"]
    assert (data["payment_id"], data["amount"], data["status"]) == (
        payment.public_id,
        "1500.00",
        "completed",
    )
    assert data["trx_id"] == payment.transaction.trx_id
    assert data["payment_link"] == {
        "id": link["id"],
        "slug": "eid-hamper",
        "title": "Eid hamper",
        "url": link["url"],
    }
    assert data["answers"] == {"name": "Nasrin", "address": "House 7, Dhaka"}
    # Both events were written by the completing transaction, for the same transaction.
    deliveries = db.session.execute(db.select(WebhookDelivery)).scalars().all()
    assert {(d.event, d.transaction_id, d.status) for d in deliveries} == {
        ("payment.completed", payment.transaction.id, "sent"),
        ("payment_link.paid", payment.transaction.id, "sent"),
    }

    listed = client.get("/api/v1/payments?payment_link=eid-hamper", headers=auth).get_json()
    assert [item["payment_id"] for item in listed["data"]] == [payment.public_id]
    read = client.get(f"/api/v1/payment-links/{link['id']}", headers=auth).get_json()["data"]
    assert (read["paid_count"], read["paid_total"], read["used_count"]) == (1, "1500.00", 1)


def _link():
    return db.session.execute(db.select(PaymentLink)).scalar_one()
