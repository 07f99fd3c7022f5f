"""Racing refunds against a real threaded server never refund more than was paid."""

import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import requests

from gateway.extensions import db
from gateway.payments.models.payment import Payment, Refund
from tests.factories import completed_payment

RACERS = 20


def race(url, headers, bodies):
    """POST every body at once from its own thread; the (status, code) each got back."""
    start = threading.Barrier(len(bodies))

    def post(body):
        start.wait()
        with requests.Session() as session:
            response = session.post(f"{url}/api/v1/refunds", json=body, headers=headers, timeout=60)
            return response.status_code, response.json().get("code"), response.json().get("data")

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(post, bodies))


def committed(payment):
    """The payment, its transaction and the sum of its refunds as committed by the server."""
    db.session.expire_all()
    payment = db.session.get(Payment, payment.id)
    total = db.session.execute(
        db.select(db.func.coalesce(db.func.sum(Refund.amount), 0)).where(
            Refund.transaction_id == payment.transaction.id
        )
    ).scalar_one()
    return payment, payment.transaction, total


def test_concurrent_partial_refunds_never_exceed_the_amount(live_server, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("1000.00"))
    body = {"trx_id": payment.transaction.trx_id, "amount": "100.00"}

    results = race(live_server, auth, [body] * RACERS)

    created = [result for result in results if result[0] == 201]
    refused = [result for result in results if result[0] != 201]
    assert len(created) == 10
    assert all(
        data["amount"] == "100.00" and data["status"] == "completed" for _, _, data in created
    )
    assert {(status, code) for status, code, _ in refused} == {(422, "REFUND_EXCEEDS_REMAINING")}
    assert len(refused) == RACERS - 10
    payment, transaction, total = committed(payment)
    assert total == Decimal("1000.00")
    assert (payment.status, payment.amount_refunded) == ("refunded", Decimal("1000.00"))
    assert (transaction.status, transaction.amount_refunded) == ("refunded", Decimal("1000.00"))


def test_concurrent_refunds_of_the_remainder_refund_it_once(live_server, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("250.00"))
    body = {"trx_id": payment.transaction.trx_id}

    results = race(live_server, auth, [body] * 8)

    assert sorted(status for status, _, _ in results) == [201] + [422] * 7
    payment, transaction, total = committed(payment)
    assert total == Decimal("250.00")
    assert (payment.amount_refunded, transaction.amount_refunded) == (
        Decimal("250.00"),
        Decimal("250.00"),
    )


def test_concurrent_refunds_that_do_not_divide_the_amount_stop_short_of_it(
    live_server, auth, brand
):
    payment = completed_payment(brand=brand, amount=Decimal("1000.00"))
    body = {"trx_id": payment.transaction.trx_id, "amount": "70.00"}

    results = race(live_server, auth, [body] * RACERS)

    assert sorted((status, code) for status, code, _ in results) == [(201, None)] * 14 + [
        (422, "REFUND_EXCEEDS_REMAINING")
    ] * (RACERS - 14)
    payment, transaction, total = committed(payment)
    assert total == Decimal("980.00")
    assert (payment.status, payment.amount_refunded) == ("partially_refunded", Decimal("980.00"))
    assert (transaction.status, transaction.amount_refunded) == (
        "partially_refunded",
        Decimal("980.00"),
    )
