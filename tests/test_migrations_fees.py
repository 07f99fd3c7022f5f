"""Migration 0021_fees widens the refund CHECK of payments and transactions to amount + fee
without rebuilding them: every row, and every child row pointing at them, stays; it goes back
unless a refund returned a fee."""

import pytest
from alembic.script import ScriptDirectory
from flask_migrate import downgrade, upgrade
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from gateway.extensions import db
from tests.services import POSTGRES_URL
from tests.test_migrations import (  # noqa: F401 - fixtures
    MIGRATIONS,
    empty_postgres_schema,
    keep_test_logging,
    migration_app,
    postgres_schemas,
    schema_options,
)
from tests.test_migrations_outbox import insert

# Children of payments and transactions: a rebuild of their parents would cascade into them.
CHILDREN = ("transactions", "refunds", "inbound_sms", "webhook_deliveries")


def fill_at_0020(connection):
    """A ৳1,000 payment paid with an ৳18.50 fee, its transaction, refund, SMS and delivery."""
    made = {}
    made["brands"] = insert(connection, "brands", made)
    made["payment_methods"] = insert(connection, "payment_methods", made, number="01712345678")
    made["payments"] = insert(
        connection,
        "payments",
        made,
        currency="BDT",
        status="partially_refunded",
        amount=100000,
        amount_bdt=100000,
        fee=1850,
        amount_paid=101850,
        amount_refunded=10000,
    )
    made["transactions"] = insert(
        connection,
        "transactions",
        made,
        currency="BDT",
        status="partially_refunded",
        amount=100000,
        amount_refunded=10000,
    )
    made["refunds"] = insert(connection, "refunds", made, amount=10000)
    made["inbound_sms"] = insert(connection, "inbound_sms", made, payment_id=made["payments"])
    made["webhook_deliveries"] = insert(
        connection,
        "webhook_deliveries",
        made,
        payment_id=made["payments"],
        transaction_id=made["transactions"],
        event_id="evt_1",
        url="https://shop.example/hooks",
    )
    return made


def links(connection, made):
    """Each child row's pointer to the payment (and transaction), as stored now."""
    one = connection.execute
    return {
        "transactions": one(text("SELECT payment_id FROM transactions")).scalars().all(),
        "refunds": one(text("SELECT transaction_id FROM refunds")).scalars().all(),
        "inbound_sms": one(text("SELECT payment_id FROM inbound_sms")).scalars().all(),
        "webhook_deliveries": one(
            text("SELECT payment_id, transaction_id FROM webhook_deliveries")
        ).all(),
    }


def refund_up_to(connection, table, cents):
    """Set a row's amount_refunded in paisa (the CHECK decides)."""
    connection.execute(text(f"UPDATE {table} SET amount_refunded = {cents}"))


def migrate_with_rows(url, engine_options=None):
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision="0020_amounts")
            with db.engine.begin() as connection:
                made = fill_at_0020(connection)
                before = links(connection, made)
            assert before["inbound_sms"] == [made["payments"]]
            upgrade(directory=MIGRATIONS, revision="0021_fees")
            with db.engine.begin() as connection:
                assert links(connection, made) == before  # nothing cascaded, nothing nulled
                assert connection.execute(
                    text("SELECT amount, fee, amount_paid, amount_refunded FROM payments")
                ).one() == (100000, 1850, 101850, 10000)
                assert connection.execute(
                    text("SELECT fee_fixed, fee_percent, fee_min, fee_max FROM payment_methods")
                ).one() == (0, 0, None, None)
                assert connection.execute(text("SELECT refund_fee FROM brands")).scalar_one() in (
                    0,
                    False,
                )
                assert connection.execute(text("SELECT fee FROM transactions")).scalar_one() == 0
                refund_up_to(connection, "payments", 101850)  # amount + fee: allowed now
            for table, cents in (("payments", 101851), ("transactions", 100001)):
                with pytest.raises(IntegrityError), db.engine.begin() as connection:
                    refund_up_to(connection, table, cents)  # beyond amount + its fee
            # Going back is refused while a refund returned a fee (flask-migrate exits).
            with pytest.raises(SystemExit):
                downgrade(directory=MIGRATIONS, revision="0020_amounts")
            with db.engine.begin() as connection:
                version = connection.execute(text("SELECT version_num FROM alembic_version"))
                assert version.scalar_one() in (
                    "0021_fees",
                    ScriptDirectory(MIGRATIONS).get_current_head(),
                )
                refund_up_to(connection, "payments", 10000)
            downgrade(directory=MIGRATIONS, revision="0020_amounts")
            with db.engine.begin() as connection:
                assert links(connection, made) == before
                columns = connection.execute(text("SELECT * FROM transactions")).keys()
                assert "fee" not in columns
            with pytest.raises(IntegrityError), db.engine.begin() as connection:
                refund_up_to(connection, "payments", 100001)  # the old ceiling again
        finally:
            db.session.remove()
            db.engine.dispose()


def test_0021_keeps_every_row_and_child_and_goes_back_on_sqlite(tmp_path):
    migrate_with_rows(f"sqlite:///{tmp_path / 'fees.sqlite3'}")


def test_0021_keeps_every_row_and_child_and_goes_back_on_postgresql(empty_postgres_schema):
    migrate_with_rows(POSTGRES_URL, schema_options(empty_postgres_schema))
