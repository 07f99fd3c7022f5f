"""A payment's notification survives its request losing the database connection while raising it.

The connection dies for real (tests/sms/test_lost_connection_resend.py's `lost_connections`) at a
statement of the notification's own path, in an SMS batch that completes a payment: the batch is
sent again at once on a fresh connection, and the payment and its notification are written once.
"""

import logging

import pytest

from gateway.notifications.catalogue import PAYMENT_COMPLETED
from tests.factories import reload
from tests.notifications.conftest import configure, notifications
from tests.sms.test_balance_chain import claim, credit
from tests.sms.test_chain_step_retry import (  # noqa: F401 - phone is a fixture
    assert_phone_retries,
    phone,
    post,
)
from tests.sms.test_lost_connection_resend import (  # noqa: F401 - a fixture
    lost_connections,
    resends,
    transactions_of,
)

SETTINGS = "SELECT notification_settings"  # the brand's settings, read first
NOTE = "INSERT INTO merchant_notifications"  # the notification's first write, in its SAVEPOINT


@pytest.mark.parametrize("statement", [SETTINGS, NOTE])
def test_a_payment_completed_while_its_notification_loses_the_connection_is_notified_once(
    client, brand, phone, lost_connections, caplog, statement
):
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    payment = claim(brand, "500.00", "AAAA000001")
    caplog.set_level(logging.WARNING)
    lost_connections.append(statement)

    answer = post(client, phone, credit("500.00", "AAAA000001", "1500.00", 1))

    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert len(resends(caplog)) == 1
    assert (reload(payment).status, transactions_of(payment)) == ("completed", 1)
    [note] = notifications(brand, PAYMENT_COMPLETED)
    assert note.dedupe_key == f"{PAYMENT_COMPLETED}:{payment.id}"
    assert [delivery.channel for delivery in note.deliveries] == ["telegram"]
    assert not [r for r in caplog.records if r.getMessage().endswith("not raised")]


def test_a_payment_whose_notification_loses_the_connection_on_every_try_is_notified_on_the_retry(
    client, brand, phone, lost_connections
):
    """Neither is written while the database keeps failing; the phone's retry writes both, once."""
    configure(brand, channels={PAYMENT_COMPLETED: ["telegram"]})
    payment = claim(brand, "500.00", "AAAA000001")
    text = credit("500.00", "AAAA000001", "1500.00", 1)
    lost_connections.extend([NOTE, NOTE])

    assert_phone_retries(post(client, phone, text))
    assert (reload(payment).status, notifications(brand, PAYMENT_COMPLETED)) == ("processing", [])

    assert post(client, phone, text).status_code == 200
    assert (reload(payment).status, transactions_of(payment)) == ("completed", 1)
    assert len(notifications(brand, PAYMENT_COMPLETED)) == 1
