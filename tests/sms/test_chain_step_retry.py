"""A resent text whose balance-chain step fails again fails its batch, so the phone sends it again.

The chain step is faulted at the database: on PostgreSQL the session's own backend is terminated
(pg_terminate_backend) as the statement runs; on SQLite, where no single statement can be made to
fail for real, the driver raises its own OperationalError for it (the `do_execute` hook runs where
the driver would, so SQLAlchemy wraps the error as it wraps a real one).
"""

import psycopg
import pytest
from sqlalchemy import event

from gateway.extensions import db
from gateway.sms.balance_chain import UNCHECKED, link_of
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import paired_device, reload, sms_message
from tests.services import POSTGRES_URL
from tests.sms.test_balance_chain import claim, credit

SMS = "/api/mobile/v1/sms"
CHAIN_LOCK = "UPDATE sms_balance_chains"  # the chain step's first statement (lock_chains)
HOLD = "SELECT inbound_sms"  # hold_unchecked's first statement, after the failed step


@pytest.fixture
def phone(brand):
    """A paired device of `brand`: (device, headers, aes_key)."""
    device, tokens, aes_key = paired_device(brand)
    return device, {"Authorization": f"Bearer {tokens['access_token']}"}, aes_key


@pytest.fixture
def database_faults(app, monkeypatch):
    """`faults.extend([...])` fails the next statements starting with each prefix, in order.

    Each fault fails the request it hits: the gateway's own resend after a lost connection
    (test_lost_connection_resend.py) is off, so that these tests reach the phone's retries.
    """
    monkeypatch.setattr("gateway.sms.ingest.LOST_CONNECTION_RESENDS", 0)
    faults = []
    dbapi = db.engine.dialect.loaded_dbapi

    def execute(cursor, statement, parameters, context):
        if not faults or not statement.lstrip().startswith(faults[0]):
            return False
        faults.pop(0)
        if db.engine.dialect.name == "postgresql":
            with psycopg.connect(
                POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
            ) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(%s)", (cursor.connection.info.backend_pid,)
                )
            return False  # the statement now runs on a terminated backend and fails for real
        raise dbapi.OperationalError("disk I/O error")

    event.listen(db.engine, "do_execute", execute)
    yield faults
    event.remove(db.engine, "do_execute", execute)
    assert faults == [], "a fault was armed but never injected"


def post(client, phone, text):
    """Forward one text as the phone does (encrypted afresh, as each retry is)."""
    _, headers, aes_key = phone
    return client.post(
        SMS, json={"messages": [sms_message(aes_key, text, local_id="m1")]}, headers=headers
    )


def assert_phone_retries(response):
    """The answer the phone sends the batch again on: the 500 envelope, no trace, a request id."""
    assert response.status_code == 500, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == "application/json"
    body = response.get_json()
    assert (body["success"], body["code"]) == (False, "INTERNAL_ERROR")
    assert body["request_id"] == response.headers["X-Request-ID"]
    assert "Traceback" not in response.get_data(as_text=True)


def stored(trx_id):
    db.session.expire_all()
    return db.session.execute(
        db.select(InboundSms).where(InboundSms.provider_trx_id == trx_id)
    ).scalar_one()


def test_a_resend_whose_chain_step_fails_again_is_answered_so_that_the_phone_retries(
    client, brand, phone, database_faults
):
    first, second, third = (
        claim(brand, "500.00", "AAAA000001"),
        claim(brand, "500.00", "AAAA000002"),
        claim(brand, "500.00", "AAAA000003"),
    )
    assert post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)).status_code == 200
    lost = credit("500.00", "AAAA000002", "2000.00", 2)
    database_faults.append(CHAIN_LOCK)
    assert_phone_retries(post(client, phone, lost))  # stored, its chain step died: held
    assert post(client, phone, credit("500.00", "AAAA000003", "2500.00", 3)).status_code == 200
    assert reload(third).status == "processing"  # 2000.00 expected before it: never chained

    database_faults.append(CHAIN_LOCK)
    again = post(client, phone, lost)  # the phone's retry: its chain step fails again

    assert_phone_retries(again)
    held = stored("AAAA000002")
    assert (held.status, held.review_reason, link_of(held)) == ("review", UNCHECKED, None)
    assert [reload(p).status for p in (first, second, third)] == [
        "completed",
        "processing",
        "processing",
    ]

    healed = post(client, phone, lost)  # the phone's next retry heals the chain

    assert healed.status_code == 200
    [result] = healed.get_json()["data"]["results"]
    assert (result["status"], result["server_ref"]) == ("duplicate", held.public_id)
    assert [reload(p).status for p in (first, second, third)] == ["completed"] * 3
    assert (link_of(stored("AAAA000002")).status, link_of(stored("AAAA000003")).status) == (
        "verified",
        "healed",
    )


def test_a_credit_never_held_is_not_paid_unchecked_when_its_resend_fails_to_chain_it(
    client, brand, phone, database_faults
):
    """The first request died in its chain step and again before holding the credit: the text
    is stored `unmatched`; the resend whose chain step fails holds it instead of matching it."""
    assert post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)).status_code == 200
    payment = claim(brand, "500.00", "AAAA000002")
    text = credit("500.00", "AAAA000002", "2000.00", 2)
    database_faults.extend([CHAIN_LOCK, HOLD])
    assert_phone_retries(post(client, phone, text))
    assert stored("AAAA000002").status == "unmatched"  # neither chained nor held

    database_faults.append(CHAIN_LOCK)
    assert_phone_retries(post(client, phone, text))

    assert (stored("AAAA000002").status, reload(payment).status) == ("review", "processing")
    assert reload(payment).review_reason.startswith(UNCHECKED)

    assert post(client, phone, text).status_code == 200
    assert (stored("AAAA000002").status, reload(payment).status) == ("matched", "completed")
    assert link_of(stored("AAAA000002")).status == "verified"


@pytest.fixture
def commit_answer_lost(app, monkeypatch):
    """Once `armed["on"]`, the next COMMIT after an INSERT of a text lands, then its connection dies
    before answering: the driver raises its OperationalError although the row is stored."""
    dialect = db.engine.dialect
    real_commit = dialect.do_commit
    armed = {"on": False, "insert": False, "lost": 0}

    def note_insert(conn, cursor, statement, *args):
        if statement.lstrip().upper().startswith("INSERT INTO INBOUND_SMS") and armed["on"]:
            armed["on"], armed["insert"] = False, True

    def do_commit(dbapi_connection):
        real_commit(dbapi_connection)
        if armed["insert"]:
            armed["insert"], armed["lost"] = False, armed["lost"] + 1
            raise dialect.loaded_dbapi.OperationalError("server closed the connection unexpectedly")

    event.listen(db.engine, "before_cursor_execute", note_insert)
    monkeypatch.setattr(dialect, "do_commit", do_commit)
    yield armed
    event.remove(db.engine, "before_cursor_execute", note_insert)


def test_a_text_whose_stored_answer_was_lost_is_chained_and_matched_with_its_batch(
    client, brand, phone, commit_answer_lost
):
    assert post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)).status_code == 200
    commit_answer_lost["on"] = True
    payment = claim(brand, "500.00", "AAAA000002")

    answer = post(client, phone, credit("500.00", "AAAA000002", "2000.00", 2))

    assert commit_answer_lost["lost"] == 1, "the fault was not injected"
    assert answer.status_code == 200
    [result] = answer.get_json()["data"]["results"]
    sms = stored("AAAA000002")
    assert (result["status"], result["server_ref"]) == ("accepted", sms.public_id)
    assert link_of(sms).status == "verified"  # chained: no gap for the next credit
    assert (sms.status, reload(payment).status) == ("matched", "completed")
    after = post(client, phone, credit("500.00", "AAAA000003", "2500.00", 3))
    assert after.status_code == 200
    assert link_of(stored("AAAA000003")).status == "verified"
