"""Migration 0018_endpoints keeps every delivery and makes each event sent so far an event of the
events API (a plugin's IPN is not one), and goes back without loss."""

import importlib.util
from datetime import datetime
from pathlib import Path

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect, text

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

REVISION = "0018_endpoints"
NOW = datetime(2026, 11, 28, 9, 0, 0)
BODY = '{"id":"evt_%s","event":"%s","created":"2026-11-28T09:00:00+00:00","data":{}}'
# (event id, event) of the deliveries written before the migration.
SENT = [("evt_a1", "payment.completed"), ("evt_b2", "webhook.test"), ("ipn_c3", "compat.piprapay2")]


def previous_revision():
    """The revision this migration follows (read from it, so the test follows a renumbering)."""
    path = Path(MIGRATIONS) / "versions" / f"{REVISION}.py"
    spec = importlib.util.spec_from_file_location("migration", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.down_revision


def fill(connection):
    """A brand and its deliveries, as the gateway stored them before the migration."""
    connection.execute(
        text(
            "INSERT INTO brands (id, name, slug, primary_color, timezone, currencies, "
            "webhook_secret, receipt_sms_enabled, require_two_factor, created_at) VALUES "
            "(1, 'Shop', 'shop', '#0f766e', 'Asia/Dhaka', 'BDT', 'whsec_x', :no, :no, :now)"
        ),
        {"no": False, "now": NOW},
    )
    for number, (event_id, event) in enumerate(SENT, start=1):
        connection.execute(
            text(
                "INSERT INTO webhook_deliveries (id, brand_id, event, event_id, url, payload, "
                "status, attempts, created_at, updated_at) VALUES "
                "(:id, 1, :event, :event_id, 'https://shop.example/h', :payload, 'sent', 1, "
                ":now, :now)"
            ),
            {
                "id": number,
                "event": event,
                "event_id": event_id,
                "payload": BODY % (event_id[4:], event),
                "now": NOW,
            },
        )
        connection.execute(
            text(
                "INSERT INTO webhook_attempts (delivery_id, attempted_at, response_status) "
                "VALUES (:id, :now, 200)"
            ),
            {"id": number, "now": NOW},
        )


def rows(connection, query):
    return sorted(tuple(row) for row in connection.execute(text(query)))


def migrate(url, engine_options=None):
    """Fill a database at the previous revision, upgrade, read, downgrade, read."""
    app = migration_app(url, engine_options)
    previous = previous_revision()
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision=previous)
            with db.engine.begin() as connection:
                fill(connection)
            upgrade(directory=MIGRATIONS, revision=REVISION)
            with db.engine.connect() as connection:
                events = rows(
                    connection, "SELECT public_id, brand_id, type, livemode, payload FROM events"
                )
                deliveries = rows(
                    connection,
                    "SELECT id, event_id, endpoint_id, livemode, payload FROM webhook_deliveries",
                )
                attempts = rows(
                    connection, "SELECT delivery_id, response_status FROM webhook_attempts"
                )
            downgrade(directory=MIGRATIONS, revision=previous)
            with db.engine.connect() as connection:
                after = rows(connection, "SELECT id, event_id, payload FROM webhook_deliveries")
                attempts_after = rows(
                    connection, "SELECT delivery_id, response_status FROM webhook_attempts"
                )
                tables = set(inspect(connection).get_table_names())
                unique = inspect(connection).get_unique_constraints("webhook_deliveries")
            return events, deliveries, after, tables, unique, attempts, attempts_after
        finally:
            db.session.remove()
            db.engine.dispose()


def assert_kept(events, deliveries, after, tables, unique, attempts, attempts_after):
    bodies = {event_id: BODY % (event_id[4:], event) for event_id, event in SENT}
    assert events == [
        ("evt_a1", 1, "payment.completed", True, bodies["evt_a1"]),
        ("evt_b2", 1, "webhook.test", True, bodies["evt_b2"]),
    ]
    assert deliveries == [
        (number, event_id, None, True, bodies[event_id])
        for number, (event_id, _) in enumerate(SENT, start=1)
    ]
    assert after == [(n, event_id, bodies[event_id]) for n, event_id, *_ in deliveries]
    # Every attempt stays with its delivery, both ways (SQLite rebuilds the table to drop its
    # unique constraint: its attempts must not go with the old table).
    assert attempts == attempts_after == [(number, 200) for number in range(1, len(SENT) + 1)]
    assert not {"events", "webhook_endpoints"} & tables
    assert [u["column_names"] for u in unique] == [["event_id"]]


def test_the_migration_keeps_every_delivery_and_back_on_sqlite(tmp_path):
    assert_kept(*migrate(f"sqlite:///{tmp_path / 'endpoints.sqlite3'}"))


def test_the_migration_keeps_every_delivery_and_back_on_postgresql(empty_postgres_schema):
    assert_kept(*migrate(POSTGRES_URL, schema_options(empty_postgres_schema)))


@pytest.fixture(autouse=True)
def _quiet_logging(keep_test_logging):  # noqa: F811 - the fixture imported above
    """migrations/env.py must not close pytest's log handlers."""
