"""One SMS, many racing writers: 20 ingestions of it and 20 claims of its TrxID complete exactly one
payment.

Each thread has its own application context, hence its own session and connection, on the engine the
suite runs on (SQLite file by default, PostgreSQL with TEST_DB=postgres).
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from gateway.devices.models.device import Device
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Transaction
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, paired_device, sms_message

TRX = "8N7A6B5C4D"
RACERS = 20


def race(app, jobs):
    """Run every job at once, each in its own app context; returns results (DomainErrors as
    values)."""
    barrier = threading.Barrier(len(jobs))

    def run(job):
        with app.app_context():
            barrier.wait()
            try:
                return job()
            except DomainError as error:
                return error
            finally:
                db.session.remove()

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(run, jobs))


def count(model, *where):
    return db.session.execute(
        db.select(db.func.count()).select_from(model).where(*where)
    ).scalar_one()


@pytest.mark.parametrize("one_payment", [False, True], ids=["20-payments", "1-payment"])
def test_twenty_ingestions_and_twenty_claims_of_one_sms_complete_one_payment(
    app, brand, one_payment
):
    brand.webhook_url = "http://127.0.0.1:9/hooks"
    db.session.commit()
    device, _, aes_key = paired_device(brand)
    text = bkash_text("500.00", TRX)
    payments = [
        PaymentFactory(brand=brand, amount=Decimal("500.00"))
        for _ in range(1 if one_payment else RACERS)
    ]
    payment_ids = [payments[i % len(payments)].id for i in range(RACERS)]
    # Each forward is encrypted afresh (new IV), as a phone retrying would send it.
    messages = [sms_message(aes_key, text, local_id=f"m{i}") for i in range(RACERS)]

    def ingest(message):
        return lambda: ingest_batch(db.session.get(Device, device.id), [message])

    def claim(payment_id):
        return lambda: submit_claim(db.session.get(Payment, payment_id), "bkash", TRX)

    jobs = [job for pair in zip(map(ingest, messages), map(claim, payment_ids)) for job in pair]
    results = race(app, jobs)

    ingested = [result[0]["status"] for result in results[0::2]]
    assert sorted(ingested) == ["accepted"] + ["duplicate"] * (RACERS - 1)
    refused = [result for result in results[1::2] if isinstance(result, DomainError)]
    assert all(http_status(error) in (409, 422) for error in refused)
    db.session.expire_all()
    [completed] = (
        db.session.execute(db.select(Payment).where(Payment.status == "completed")).scalars().all()
    )
    [sms] = db.session.execute(db.select(InboundSms)).scalars().all()
    assert (sms.status, sms.payment_id) == ("matched", completed.id)
    assert count(Transaction) == 1
    assert count(WebhookDelivery, WebhookDelivery.event == "payment.completed") == 1
