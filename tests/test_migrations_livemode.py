"""Migration 0017_livemode makes every existing row live without loss, and goes back unless a test
row would break an old unique rule."""

import pytest
from alembic.script import ScriptDirectory
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

FLAGGED = (
    "api_keys",
    "compat_keys",
    "payments",
    "refunds",
    "customers",
    "payment_links",
    "invoices",
)


def fill_at_0016(connection):
    """A brand with one row of every flagged table (and what they hang on); {table: id}."""
    made = {}
    made["brands"] = insert(connection, "brands", made)
    made["customers"] = insert(connection, "customers", made, email="rahim@example.com")
    for table in ("api_keys", "compat_keys"):
        made[table] = insert(connection, table, made)
    made["payments"] = insert(connection, "payments", made, currency="BDT")
    made["payment_links"] = insert(
        connection, "payment_links", made, currency="BDT", custom_fields="[]"
    )
    made["invoices"] = insert(connection, "invoices", made, currency="BDT", language="en")
    made["transactions"] = insert(connection, "transactions", made, currency="BDT")
    made["refunds"] = insert(connection, "refunds", made)
    insert_sequence = (
        "INSERT INTO invoice_sequences (brand_id, prefix, next_number) VALUES (:b, 'INV-', 2)"
    )
    connection.execute(text(insert_sequence), {"b": made["brands"]})
    return made


def modes(connection, made):
    """{table: livemode of its row} of every flagged table."""
    return {
        table: bool(
            connection.execute(
                text(f"SELECT livemode FROM {table} WHERE id = :id"), {"id": made[table]}
            ).scalar_one()
        )
        for table in FLAGGED
    }


def migrate_and_return(url, engine_options=None):
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision="0016")
            with db.engine.begin() as connection:
                made = fill_at_0016(connection)
            # To this revision, not the head: a later one's downgrade would run first.
            upgrade(directory=MIGRATIONS, revision="0017_livemode")
            with db.engine.begin() as connection:
                assert modes(connection, made) == dict.fromkeys(FLAGGED, True)
                assert connection.execute(
                    text("SELECT next_number, next_test_number FROM invoice_sequences")
                ).one() == (2, 1)
                # A test profile with the live one's e-mail is allowed now, and holds the way back.
                connection.execute(
                    text(
                        "INSERT INTO customers (brand_id, livemode, email, created_at, updated_at)"
                        " SELECT brand_id, :test, email, created_at, updated_at FROM customers"
                    ),
                    {"test": False},
                )
            # flask-migrate reports the migration's RuntimeError and exits.
            with pytest.raises(SystemExit):
                downgrade(directory=MIGRATIONS, revision="0016")
            with db.engine.begin() as connection:
                version = connection.execute(text("SELECT version_num FROM alembic_version"))
                # Refused, nothing of 0017 undone: a later revision's downgrade may have run first
                # where DDL is not transactional (SQLite), or been rolled back with it (PostgreSQL).
                assert version.scalar_one() in (
                    "0017_livemode",
                    ScriptDirectory(MIGRATIONS).get_current_head(),
                )
                assert modes(connection, made)["customers"] is True
                connection.execute(text("DELETE FROM customers WHERE NOT livemode"))
            downgrade(directory=MIGRATIONS, revision="0016")
            with db.engine.connect() as connection:
                for table in FLAGGED:
                    kept = connection.execute(text(f"SELECT id FROM {table}")).scalars().all()
                    assert kept == [made[table]], table
                    columns = connection.execute(text(f"SELECT * FROM {table}")).keys()
                    assert "livemode" not in columns, table
        finally:
            db.session.remove()
            db.engine.dispose()


def test_0017_makes_every_row_live_and_goes_back_on_sqlite(tmp_path):
    migrate_and_return(f"sqlite:///{tmp_path / 'livemode.sqlite3'}")


def test_0017_makes_every_row_live_and_goes_back_on_postgresql(empty_postgres_schema):
    migrate_and_return(POSTGRES_URL, schema_options(empty_postgres_schema))
