"""A phone's batch settles each credit one by one, exactly as it would have alone."""

from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import event

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Transaction
from gateway.sms.ingest import ingest_batch
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, paired_device, reload, sms_message


@pytest.fixture
def phone(brand):
    """A paired device of `brand` and its AES key."""
    device, _, aes_key = paired_device(brand)
    return device, aes_key


def claim(brand, trx_id, amount="500.00", **values):
    payment = PaymentFactory(brand=brand, amount=Decimal(amount), **values)
    submit_claim(payment, "bkash", trx_id)
    return payment


def send(phone, texts):
    """One batch of texts; the stored row of each, in order."""
    device, aes_key = phone
    results = ingest_batch(device, [sms_message(aes_key, text) for text in texts])
    assert [result["status"] for result in results] == ["accepted"] * len(texts)
    refs = [result["server_ref"] for result in results]
    rows = db.session.execute(db.select(InboundSms).where(InboundSms.public_id.in_(refs)))
    by_ref = {sms.public_id: sms for sms in rows.scalars()}
    return [by_ref[ref] for ref in refs]


def completed_events():
    return db.session.execute(
        db.select(WebhookDelivery.payment_id).where(WebhookDelivery.event == "payment.completed")
    ).scalars()


def test_one_batch_settles_each_credit_as_it_would_alone(brand, phone):
    brand.webhook_url = "http://127.0.0.1:9/hooks"
    db.session.commit()
    plain = [claim(brand, f"PLAIN0000{i}") for i in range(3)]
    short = claim(brand, "SHORT00001", amount="400.00")
    now = utcnow()
    rivals = [
        PaymentFactory(
            brand=brand,
            status="processing",
            provider="bkash",
            provider_trx_id="RIVAL00001",
            claimed_at=now - timedelta(seconds=seconds),
        )
        for seconds in (1, 5)
    ]
    cancelled = PaymentFactory(
        brand=brand,
        status="cancelled",
        provider="bkash",
        provider_trx_id="LATE000001",
        claimed_at=now - timedelta(minutes=2),
        cancelled_at=now - timedelta(minutes=1),
    )
    trx_ids = [f"PLAIN0000{i}" for i in range(3)]
    trx_ids += ["SHORT00001", "RIVAL00001", "LATE000001", "NOCLAIM001"]
    balances = [Decimal("1000.00") + 500 * n for n in range(1, len(trx_ids) + 1)]
    texts = [
        bkash_text("500.00", trx, balance=f"{balance:.2f}")
        for trx, balance in zip(trx_ids, balances)
    ]

    stored = send(phone, texts)

    assert [reload(p).status for p in plain] == ["completed"] * 3
    assert [sms.status for sms in stored[:3]] == ["matched"] * 3
    assert [sms.payment_id for sms in stored[:3]] == [p.id for p in plain]
    assert (reload(short).status, stored[3].status) == ("processing", "review")
    assert reload(short).review_reason.startswith("SMS amount 500.00 differs")
    early, late = reload(rivals[1]), reload(rivals[0])
    assert (early.status, late.status) == ("completed", "processing")
    assert late.review_reason == f"TrxID RIVAL00001 paid another payment ({early.public_id})"
    assert (reload(cancelled).status, stored[5].status) == ("cancelled", "review")
    assert stored[5].payment_id == cancelled.id
    assert (stored[6].status, stored[6].payment_id) == ("unmatched", None)
    paid = {p.id for p in plain} | {early.id}
    transactions = db.session.execute(db.select(Transaction.payment_id)).scalars()
    assert sorted(transactions) == sorted(paid)
    assert sorted(completed_events()) == sorted(paid)


def test_a_payment_cancelled_while_its_batch_settles_leaves_the_others_completed(app, brand, phone):
    """A real race: another connection cancels one payment just before the batch binds its texts."""
    payments = [claim(brand, f"RACE00000{i}") for i in range(3)]
    victim, raced = payments[1].id, []

    def cancel_meanwhile(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("UPDATE inbound_sms SET status") and not raced:
            raced.append(statement)
            with db.engine.connect() as other:
                other.execute(
                    db.update(Payment)
                    .where(Payment.id == victim)
                    .values(status="cancelled", cancelled_at=utcnow() + timedelta(minutes=1))
                )
                other.commit()

    event.listen(db.engine, "before_cursor_execute", cancel_meanwhile)
    texts = [
        bkash_text("500.00", f"RACE00000{i}", balance=f"{1500 + 500 * i}.00") for i in range(3)
    ]
    try:
        stored = send(phone, texts)
    finally:
        event.remove(db.engine, "before_cursor_execute", cancel_meanwhile)

    assert raced
    assert [reload(p).status for p in payments] == ["completed", "cancelled", "completed"]
    assert [sms.status for sms in stored] == ["matched", "unmatched", "matched"]
    assert stored[1].payment_id is None
    assert len(db.session.execute(db.select(Transaction)).all()) == 2
