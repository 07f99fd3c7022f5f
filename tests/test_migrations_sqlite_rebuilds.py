"""Upgrading a populated SQLite database keeps every row: batch mode rebuilds a table (a copy, DROP
TABLE of the original, a rename), which with the app's foreign_keys=ON deleted the child rows or
was refused half-way; migrations/env.py turns the pragma off around the migration and on again."""

from flask_migrate import downgrade, upgrade
from sqlalchemy import text

from gateway.extensions import db
from tests.test_migrations import MIGRATIONS, keep_test_logging, migration_app  # noqa: F401
from tests.test_migrations_outbox import insert


def count(connection, table):
    return connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()


def at(tmp_path, revision):
    """An app on a new SQLite file migrated to `revision` (its context left to the caller)."""
    app = migration_app(f"sqlite:///{tmp_path / 'gateway.sqlite3'}")
    with app.app_context():
        upgrade(directory=MIGRATIONS, revision=revision)
    return app


def a_delivery_with_its_attempt(connection, status):
    references = {"brands": insert(connection, "brands", {})}
    references["webhook_deliveries"] = insert(
        connection,
        "webhook_deliveries",
        references,
        status=status,
        event_id="evt_1",
        url="https://shop.example/hooks",
        payment_id=None,
        transaction_id=None,
    )
    insert(connection, "webhook_attempts", references)


def test_0005_keeps_the_webhook_attempts_of_the_deliveries_it_rebuilds(tmp_path):
    app = at(tmp_path, "0004")
    with app.app_context():
        with db.engine.begin() as connection:
            a_delivery_with_its_attempt(connection, "success")
        upgrade(directory=MIGRATIONS, revision="0005")
        with db.engine.connect() as connection:
            assert count(connection, "webhook_attempts") == 1


def test_0009_upgrades_a_database_holding_a_paid_payment(tmp_path):
    app = at(tmp_path, "0008")
    with app.app_context():
        with db.engine.begin() as connection:
            references = {"brands": insert(connection, "brands", {})}
            references["customers"] = insert(connection, "customers", references)
            references["payments"] = insert(
                connection,
                "payments",
                references,
                status="completed",
                amount=50000,
                amount_refunded=0,
                customer_id=None,
            )
            insert(
                connection,
                "transactions",
                references,
                status="completed",
                amount=50000,
                amount_refunded=0,
            )
        upgrade(
            directory=MIGRATIONS, revision="0009"
        )  # refused half-way before: DROP TABLE payments
        with db.engine.connect() as connection:
            version = connection.execute(text("SELECT version_num FROM alembic_version"))
            assert version.scalar_one() == "0009"
            assert (count(connection, "payments"), count(connection, "transactions")) == (1, 1)


def test_0013_keeps_the_phones_chains_notifications_and_texts(tmp_path):
    app = at(tmp_path, "0012")
    with app.app_context():
        with db.engine.begin() as connection:
            references = {"brands": insert(connection, "brands", {})}
            references["devices"] = insert(connection, "devices", references)
            references["inbound_sms"] = insert(
                connection, "inbound_sms", references, payment_id=None, device_id=1
            )
            references["sms_balance_chains"] = insert(
                connection, "sms_balance_chains", references, receiving_number="01712345678"
            )
            insert(connection, "sms_balance_links", references, before=100, after=200, status="ok")
            insert(connection, "notifications", references, device_id=references["devices"])
        upgrade(directory=MIGRATIONS, revision="0013")
        with db.engine.connect() as connection:
            kept = {
                table: count(connection, table)
                for table in ("sms_balance_chains", "sms_balance_links", "notifications")
            }
            phone = connection.execute(text("SELECT device_id FROM inbound_sms")).scalar_one()
            assert kept == {"sms_balance_chains": 1, "sms_balance_links": 1, "notifications": 1}
            assert phone == references["devices"]


def test_a_downgrade_of_0016_keeps_the_webhook_attempts(tmp_path):
    app = at(tmp_path, "0016")
    with app.app_context():
        with db.engine.begin() as connection:
            a_delivery_with_its_attempt(connection, "sent")
        downgrade(directory=MIGRATIONS, revision="0015")
        with db.engine.connect() as connection:
            assert count(connection, "webhook_attempts") == 1


def test_foreign_keys_are_on_again_after_migrating(tmp_path):
    app = at(tmp_path, "head")
    with app.app_context(), db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1
