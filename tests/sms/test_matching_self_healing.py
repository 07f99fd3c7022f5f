"""Self-healing matching: a stored credit is matched whatever happened to the request that stored
it.

A connection lost between the SMS insert and its match (PostgreSQL: the session's own backend
terminated with pg_terminate_backend at that moment) leaves a paid text `unmatched` and its claim
`processing`; the phone's retry (answered `duplicate`) or, without one, the periodic job completes
the payment. On either engine the job and the duplicate path are also shown on a credit stored
unmatched beside a waiting claim.
"""

from datetime import timedelta
from decimal import Decimal

import psycopg
import pytest
from sqlalchemy import event

from gateway import jobs
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Transaction
from gateway.sms.matching import heal_matching
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import PaymentFactory, bkash_text, paired_device, sms_message
from tests.services import POSTGRES_URL

SMS = "/api/mobile/v1/sms"
TRX = "9K8J7H6G5F"


@pytest.fixture
def phone(brand):
    """A paired device of `brand` (which has a webhook URL): (device, headers, aes_key)."""
    brand.webhook_url = "http://127.0.0.1:9/hooks"
    db.session.commit()
    device, tokens, aes_key = paired_device(brand)
    return device, {"Authorization": f"Bearer {tokens['access_token']}"}, aes_key


def post_batch(client, phone, text):
    """Forward one text as the phone does (encrypted afresh each time, as its retry would be). A
    retry sends the stored text itself: bkash_text() prints the minute it is built, so a text built
    again after the minute turned would be another text with the same TrxID."""
    _, headers, aes_key = phone
    return client.post(
        SMS, json={"messages": [sms_message(aes_key, text, local_id="m1")]}, headers=headers
    )


def claimed(brand, amount="500.00"):
    """A payment whose customer has claimed TRX at checkout and that waits for the SMS."""
    return PaymentFactory(
        brand=brand,
        amount=Decimal(amount),
        status="processing",
        provider="bkash",
        provider_trx_id=TRX,
        claimed_at=utcnow(),
    )


def stranded(client, brand, phone, amount="500.00"):
    """A credit stored `unmatched` while a claim waits for it: what a request dying after the insert
    leaves.
    """
    assert (
        post_batch(client, phone, bkash_text(amount, TRX)).status_code == 200
    )  # no claim yet: stored only
    payment = claimed(brand)
    return payment, state()[1]


def state():
    """(payments, the one stored SMS) as committed."""
    db.session.expire_all()
    payments = db.session.execute(db.select(Payment).order_by(Payment.id)).scalars().all()
    return payments, db.session.execute(db.select(InboundSms)).scalar_one()


def assert_completed_by_the_sms(payment):
    db.session.expire_all()
    payment = db.session.get(Payment, payment.id)
    sms = db.session.execute(db.select(InboundSms)).scalar_one()
    assert payment.status == "completed"
    assert (sms.status, sms.payment_id) == ("matched", payment.id)
    assert db.session.scalar(db.select(db.func.count()).select_from(Transaction)) == 1
    assert (
        db.session.scalar(
            db.select(db.func.count())
            .select_from(WebhookDelivery)
            .where(WebhookDelivery.event == "payment.completed")
        )
        == 1
    )


def test_the_periodic_job_matches_a_stored_credit_a_claim_waits_for(client, brand, phone):
    payment, sms = stranded(client, brand, phone)
    assert (sms.status, payment.status) == ("unmatched", "processing")

    assert heal_matching() == 1

    assert_completed_by_the_sms(payment)
    assert heal_matching() == 0  # nothing left to heal


def test_a_duplicate_forward_of_a_stranded_credit_completes_its_payment(client, brand, phone):
    payment, sms = stranded(client, brand, phone)

    retry = post_batch(client, phone, sms.body)  # the same text again

    [result] = retry.get_json()["data"]["results"]
    assert (result["status"], result["server_ref"]) == ("duplicate", sms.public_id)
    assert_completed_by_the_sms(payment)


def test_the_job_is_registered_beside_the_sweep_and_run_by_the_sweep_command(
    client, runner, brand, phone
):
    assert (
        "heal-matching",
        "gateway.sms.matching.heal_matching",
        "SWEEP_INTERVAL",
    ) in jobs.PERIODIC
    payment, _ = stranded(client, brand, phone)

    result = runner.invoke(args=["gateway", "sweep"])

    assert "heal-matching: 1" in result.output.splitlines()
    assert db.session.get(Payment, payment.id).status == "completed"


def test_the_job_holds_a_stranded_credit_of_the_wrong_amount_for_review(client, brand, phone):
    payment, _ = stranded(client, brand, phone, amount="499.00")
    db.session.execute(db.update(InboundSms).values(amount=Decimal("450.00")))
    db.session.commit()

    heal_matching()

    [payment], sms = state()
    assert (payment.status, sms.status, sms.payment_id) == ("processing", "review", payment.id)
    assert payment.review_reason.startswith("SMS amount 450.00 differs")


@pytest.mark.parametrize("claim", ["none", "expired", "other-trx"])
def test_the_job_leaves_a_credit_no_live_claim_waits_for(client, brand, phone, claim):
    post_batch(client, phone, bkash_text("500.00", TRX))
    if claim == "expired":
        payment = claimed(brand)
        payment.expires_at = utcnow() - timedelta(seconds=1)
        db.session.commit()
    elif claim == "other-trx":
        payment = claimed(brand)
        payment.provider_trx_id = "OTHER12345"
        db.session.commit()

    assert heal_matching() == 0

    assert state()[1].status == "unmatched"
    assert db.session.scalar(db.select(db.func.count()).select_from(Transaction)) == 0


# --- the real fault: the session's connection terminated between the SMS insert and its match
# (PostgreSQL) ---


@pytest.fixture
def connection_killed_after_sms_insert(app, monkeypatch):
    """Terminate the session's own backend at the first statement after the commit that stored an
    SMS.

    The request then fails: the gateway's own resend after a lost connection
    (test_lost_connection_resend.py) is off, as when its connection is lost again.
    """
    if db.engine.dialect.name != "postgresql":
        pytest.skip("pg_terminate_backend needs PostgreSQL (TEST_DB=postgres)")
    monkeypatch.setattr("gateway.sms.ingest.LOST_CONNECTION_RESENDS", 0)
    armed = {"inserted": False, "kill": False, "killed": 0}

    def note_insert(conn, cursor, statement, *args):
        if armed["kill"]:
            armed["kill"] = False
            with psycopg.connect(
                POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
            ) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(%s)",
                    (conn.connection.dbapi_connection.info.backend_pid,),
                )
            armed["killed"] += 1
        elif (
            statement.lstrip().upper().startswith("INSERT INTO INBOUND_SMS") and not armed["killed"]
        ):
            armed["inserted"] = True

    def arm_after_commit(session):
        if armed["inserted"]:
            armed["inserted"], armed["kill"] = False, True

    event.listen(db.engine, "before_cursor_execute", note_insert)
    event.listen(db.session, "after_commit", arm_after_commit)
    yield armed
    event.remove(db.engine, "before_cursor_execute", note_insert)
    event.remove(db.session, "after_commit", arm_after_commit)


def forward_during_the_fault(client, brand, phone, armed):
    """The claim waits; the phone forwards the paid text and the connection dies right after the
    insert.
    """
    payment = claimed(brand)
    failed = post_batch(client, phone, bkash_text("500.00", TRX))
    assert armed["killed"] == 1, "the fault was not injected"
    assert (failed.status_code, failed.get_json()["code"]) == (500, "INTERNAL_ERROR")
    [stuck], sms = state()
    assert (stuck.status, sms.status) == (
        "processing",
        "unmatched",
    )  # stored, not matched: the stranded state
    return payment, sms


def test_after_a_lost_connection_the_phones_retry_is_duplicate_and_completes_the_payment(
    client, brand, phone, connection_killed_after_sms_insert
):
    payment, sms = forward_during_the_fault(
        client, brand, phone, connection_killed_after_sms_insert
    )

    retry = post_batch(client, phone, sms.body)  # the same text again

    assert retry.status_code == 200
    [result] = retry.get_json()["data"]["results"]
    assert (result["status"], result["server_ref"]) == ("duplicate", sms.public_id)
    assert_completed_by_the_sms(payment)


def test_after_a_lost_connection_the_periodic_job_completes_the_payment_without_a_retry(
    client, brand, phone, connection_killed_after_sms_insert
):
    payment, _ = forward_during_the_fault(client, brand, phone, connection_killed_after_sms_insert)

    assert heal_matching() == 1

    assert_completed_by_the_sms(payment)
