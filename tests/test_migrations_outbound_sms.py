"""Migration 0029_outbound_sms_livemode makes every text queued so far live, keeps every row, and
goes back."""

from flask_migrate import downgrade, upgrade
from sqlalchemy import text

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

BEFORE, AFTER = "0028_partial_payment_indexes", "0029_outbound_sms_livemode"


def texts(connection):
    """(id, to_number, status) of every outbound text, in order."""
    return connection.execute(
        text("SELECT id, to_number, status FROM outbound_sms ORDER BY id")
    ).all()


def migrate_and_return(url, engine_options=None):
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision=BEFORE)
            with db.engine.begin() as connection:
                made = {"brands": insert(connection, "brands", {})}
                for status in ("pending", "failed"):
                    insert(
                        connection, "outbound_sms", made, to_number="+8801700000001", status=status
                    )
                before = texts(connection)
            # To this revision, not the head: a later one's downgrade would run first.
            upgrade(directory=MIGRATIONS, revision=AFTER)
            with db.engine.begin() as connection:
                assert texts(connection) == before
                modes = connection.execute(text("SELECT livemode FROM outbound_sms")).scalars()
                assert [bool(mode) for mode in modes] == [True, True]
                connection.execute(
                    text(
                        "INSERT INTO outbound_sms (brand_id, livemode, to_number, body, status, "
                        "attempts, next_attempt_at, created_at, updated_at) SELECT brand_id, "
                        ":test, to_number, body, status, attempts, next_attempt_at, created_at, "
                        "updated_at FROM outbound_sms WHERE status = 'failed'"
                    ),
                    {"test": False},
                )
                after = texts(connection)
            downgrade(directory=MIGRATIONS, revision=BEFORE)
            with db.engine.connect() as connection:
                assert texts(connection) == after
                columns = connection.execute(text("SELECT * FROM outbound_sms")).keys()
                assert "livemode" not in columns
        finally:
            db.session.remove()
            db.engine.dispose()


def test_0029_makes_every_text_live_and_goes_back_on_sqlite(tmp_path):
    migrate_and_return(f"sqlite:///{tmp_path / 'outbound_sms.sqlite3'}")


def test_0029_makes_every_text_live_and_goes_back_on_postgresql(empty_postgres_schema):
    migrate_and_return(POSTGRES_URL, schema_options(empty_postgres_schema))
