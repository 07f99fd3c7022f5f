"""Migration 0016 moves every outbox row onto the one vocabulary without loss, and back."""

from datetime import datetime, timedelta

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import Boolean, DateTime, Integer, Numeric, inspect, text

from gateway import create_app
from gateway.extensions import db
from gateway.mail.models.mail import OutboundMail
from gateway.notifications.models.notification import NotificationDelivery
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.services import POSTGRES_URL
from tests.test_migrations import (  # noqa: F401 - fixtures
    MIGRATIONS,
    empty_postgres_schema,
    keep_test_logging,
    migration_app,
    postgres_schemas,
    schema_options,
)

NOW = datetime(2026, 11, 28, 9, 0, 0)
LEASE = NOW + timedelta(seconds=60)
# (table, status at 0015, attempts, lease, outbox status at 0016, the word its front door shows)
ROWS = [
    ("webhook_deliveries", "pending", 0, None, "pending", "pending"),
    ("webhook_deliveries", "pending", 1, LEASE, "pending", "pending"),  # first attempt in flight
    ("webhook_deliveries", "retrying", 2, None, "pending", "retrying"),
    ("webhook_deliveries", "retrying", 3, LEASE, "pending", "retrying"),  # a retry in flight
    ("webhook_deliveries", "success", 1, None, "sent", "success"),
    ("webhook_deliveries", "failed", 8, None, "failed", "failed"),
    ("outbound_mail", "queued", 0, None, "pending", "queued"),
    ("outbound_mail", "sending", 1, LEASE, "pending", "sending"),
    ("outbound_mail", "sent", 1, None, "sent", "sent"),
    ("outbound_mail", "failed", 6, None, "failed", "failed"),
    ("outbound_sms", "queued", 0, None, "pending", "queued"),
    ("outbound_sms", "leased", 1, LEASE, "pending", "leased"),
    ("outbound_sms", "sent", 1, None, "sent", "sent"),
    ("outbound_sms", "failed", 5, None, "failed", "failed"),
    ("notification_deliveries", "pending", 0, None, "pending", "pending"),
    ("notification_deliveries", "sent", 1, None, "sent", "sent"),
    ("notification_deliveries", "failed", 6, None, "failed", "failed"),
]
MODELS = {
    "webhook_deliveries": (WebhookDelivery, "log_status"),
    "outbound_mail": (OutboundMail, "shown_status"),
    "outbound_sms": (OutboundSms, "shown_status"),
    "notification_deliveries": (NotificationDelivery, "status"),
}


def filler(column, references):
    """A value for a NOT NULL column the test does not care about."""
    for key in column.get("foreign_keys", ()):
        return references[key]
    kind = column["type"]
    if isinstance(kind, Boolean):
        return False
    if isinstance(kind, (Integer, Numeric)):
        return 1
    if isinstance(kind, DateTime):
        return NOW
    return f"x{id(column) % 10_000}"


def insert(connection, table, references, **values):
    """Insert a row at 0015, every other required column filled; its id."""
    inspector = inspect(connection)
    foreign = {
        tuple(fk["constrained_columns"])[0]: fk["referred_table"]
        for fk in inspector.get_foreign_keys(table)
    }
    row = dict(values)
    for column in inspector.get_columns(table):
        name = column["name"]
        if name in row or name == "id" or column["nullable"] or column.get("default"):
            continue
        row[name] = references[foreign[name]] if name in foreign else filler(column, references)
    names = ", ".join(row)
    marks = ", ".join(f":{name}" for name in row)
    connection.execute(text(f"INSERT INTO {table} ({names}) VALUES ({marks})"), row)
    return connection.execute(text(f"SELECT max(id) FROM {table}")).scalar_one()


def fill_at_0015(connection):
    """A brand with a notification and one row of every kind and status; {row id: ROWS entry}."""
    references = {}
    references["brands"] = insert(connection, "brands", references)
    references["merchant_notifications"] = insert(
        connection, "merchant_notifications", references, event="test"
    )
    made = {}
    for number, entry in enumerate(ROWS):
        table, status, attempts, lease = entry[:4]
        extra = {"event_id": f"evt_{number}", "url": "https://shop.example/hooks"}
        extra = extra if table == "webhook_deliveries" else {}
        if table == "outbound_sms" and lease:
            extra["leased_by"] = "phone-1"
        row_id = insert(
            connection,
            table,
            references,
            status=status,
            attempts=attempts,
            lease_expires_at=lease,
            next_attempt_at=NOW,
            created_at=NOW,
            updated_at=NOW,
            **extra,
        )
        made[(table, row_id)] = entry
    return made


def statuses(connection):
    """{(table, id): status} of every outbox row."""
    found = {}
    for table in MODELS:
        for row_id, status in connection.execute(text(f"SELECT id, status FROM {table}")):
            found[(table, row_id)] = status
    return found


def migrate_outbox_rows(url, engine_options=None):
    """Fill a database at 0015, upgrade it, read every row as the code does, downgrade it."""
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision="0015")
            with db.engine.begin() as connection:
                made = fill_at_0015(connection)
            upgrade(directory=MIGRATIONS)
            with db.engine.connect() as connection:
                upgraded = statuses(connection)
            shown = {}
            for table, row_id in made:
                model, word = MODELS[table]
                row = db.session.get(model, row_id)
                shown[(table, row_id)] = (getattr(row, word), row.attempts, row.lease_expires_at)
            sent_at = db.session.execute(
                db.select(WebhookDelivery.sent_at).where(WebhookDelivery.status == "sent")
            ).scalar_one()
            db.session.remove()
            downgrade(directory=MIGRATIONS, revision="0015")
            with db.engine.connect() as connection:
                downgraded = statuses(connection)
            return made, upgraded, shown, sent_at, downgraded
        finally:
            db.session.remove()
            db.engine.dispose()


def assert_moved_without_loss(made, upgraded, shown, sent_at, downgraded):
    assert set(upgraded) == set(made) == set(downgraded)  # no row lost either way
    for key, (_, before, attempts, lease, after, word) in made.items():
        assert upgraded[key] == after, key
        assert shown[key][0] == word, key  # the front door's word is today's
        assert shown[key][1] == attempts, key
        assert (shown[key][2] is None) == (lease is None), key  # a held row is still held
        assert downgraded[key] == before, key
    assert sent_at is not None  # a delivered webhook gets its delivery time


def test_0016_moves_every_outbox_row_and_back_on_sqlite(tmp_path):
    assert_moved_without_loss(*migrate_outbox_rows(f"sqlite:///{tmp_path / 'outbox.sqlite3'}"))


def test_0016_moves_every_outbox_row_and_back_on_postgresql(empty_postgres_schema):
    assert_moved_without_loss(
        *migrate_outbox_rows(POSTGRES_URL, schema_options(empty_postgres_schema))
    )


@pytest.fixture(autouse=True)
def _quiet_logging(keep_test_logging):  # noqa: F811 - the fixture imported above
    """migrations/env.py must not close pytest's log handlers."""
