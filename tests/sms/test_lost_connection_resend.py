"""A batch whose database connection dies under it is sent again at once on a fresh connection.

The connection is lost for real as a statement runs: on PostgreSQL its backend is terminated
(pg_terminate_backend), on SQLite the driver's connection is closed. Either way the statement
fails with the driver's own error and SQLAlchemy sees a lost connection, as under a database
restart or the fault suite's terminator.
"""

import logging

import psycopg
import pytest
from sqlalchemy import event, func

from gateway.extensions import db
from gateway.payments.models.payment import Transaction
from gateway.sms.balance_chain import UNCHECKED, link_of
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import reload
from tests.services import POSTGRES_URL
from tests.sms.test_balance_chain import claim, credit
from tests.sms.test_chain_step_retry import (  # noqa: F401 - phone is a fixture
    CHAIN_LOCK,
    assert_phone_retries,
    phone,
    post,
    stored,
)

PAY = "UPDATE payments"  # the completion's first write, in the batch's last step
RESENT = "database connection lost in an SMS batch; sent again at once"


@pytest.fixture
def lost_connections(app):
    """`lost_connections.extend([...])`: the connection running the next statement that starts
    with each prefix dies as it runs, in order."""
    armed = []

    def execute(cursor, statement, parameters, context):
        if not armed or not statement.lstrip().startswith(armed[0]):
            return False
        armed.pop(0)
        if db.engine.dialect.name == "postgresql":
            with psycopg.connect(
                POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
            ) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(%s)", (cursor.connection.info.backend_pid,)
                )
        else:
            cursor.connection.close()  # its open transaction is rolled back, as a dead one is
        return False  # the statement runs on the dead connection and fails for real

    event.listen(db.engine, "do_execute", execute)
    yield armed
    event.remove(db.engine, "do_execute", execute)
    assert armed == [], "a connection was to be lost but never was"


def resends(caplog):
    return [record for record in caplog.records if record.getMessage() == RESENT]


def transactions_of(payment):
    return db.session.execute(
        db.select(func.count()).select_from(Transaction).where(Transaction.payment_id == payment.id)
    ).scalar_one()


def test_a_batch_whose_connection_dies_while_paying_is_finished_at_once(
    client, brand, phone, lost_connections, caplog
):
    assert post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)).status_code == 200
    payment = claim(brand, "500.00", "AAAA000002")
    caplog.set_level(logging.WARNING, logger="gateway.sms.ingest")
    lost_connections.append(PAY)  # stored and chained, then the connection dies while paying

    answer = post(client, phone, credit("500.00", "AAAA000002", "2000.00", 2))

    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert len(resends(caplog)) == 1
    sms = stored("AAAA000002")  # stored once
    [result] = answer.get_json()["data"]["results"]
    # The phone sent it once: it is told `accepted`, not `duplicate`, with the one stored copy.
    assert (result["status"], result["server_ref"]) == ("accepted", sms.public_id)
    assert (sms.status, reload(payment).status, transactions_of(payment)) == (
        "matched",
        "completed",
        1,
    )
    assert link_of(sms).status == "verified"


def test_a_resend_whose_chain_step_loses_its_connection_is_chained_on_a_fresh_one(
    client, brand, phone, lost_connections, caplog
):
    """The phone's retry after a request died in its chain step: its own chain step loses the
    connection, and the batch no longer fails once the connection is healthy again."""
    caplog.set_level(logging.WARNING, logger="gateway.sms.ingest")
    assert post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)).status_code == 200
    payment = claim(brand, "500.00", "AAAA000002")
    text = credit("500.00", "AAAA000002", "2000.00", 2)
    lost_connections.extend([CHAIN_LOCK, CHAIN_LOCK])  # the try and the gateway's resend die
    assert_phone_retries(post(client, phone, text))
    held = stored("AAAA000002")
    assert (held.status, held.review_reason, link_of(held)) == ("review", UNCHECKED, None)
    caplog.clear()
    lost_connections.append(CHAIN_LOCK)  # the phone's retry loses its connection once

    again = post(client, phone, text)

    assert again.status_code == 200, again.get_data(as_text=True)
    assert len(resends(caplog)) == 1
    [result] = again.get_json()["data"]["results"]
    assert (result["status"], result["server_ref"]) == ("duplicate", held.public_id)
    sms = stored("AAAA000002")
    assert (sms.status, reload(payment).status, transactions_of(payment)) == (
        "matched",
        "completed",
        1,
    )
    assert link_of(sms).status == "verified"


def test_a_batch_that_loses_its_connection_on_every_try_is_left_to_the_phone(
    client, brand, phone, lost_connections
):
    payment = claim(brand, "500.00", "AAAA000001")
    lost_connections.extend([PAY, PAY])

    assert_phone_retries(post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)))
    assert (stored("AAAA000001").status, reload(payment).status) == ("unmatched", "processing")

    assert post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1)).status_code == 200
    assert (stored("AAAA000001").status, reload(payment).status) == ("matched", "completed")
    assert transactions_of(payment) == 1
