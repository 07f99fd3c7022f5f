"""Migration 0030_notification_acks moves each acknowledgement to the phone it counts for: a phone's
own notification to that phone, a brand-wide one read before to every phone of its brand (none
shows an old alert again); the downgrade marks a notification read if any phone read it."""

from datetime import datetime

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
from tests.test_migrations_outbox import insert

BEFORE, AFTER = "0029_outbound_sms_livemode", "0030_notification_acks"
READ = datetime(2026, 11, 28, 9, 0, 0)
READ_LATER = datetime(2026, 11, 29, 10, 30, 0)
READ_LAST = datetime(2026, 11, 30, 8, 0, 0)


def device(connection, brand_id, name):
    return insert(connection, "devices", {"brands": brand_id}, uuid=name, device_id=name)


def notification(connection, brand_id, device_id, title, acknowledged_at=None):
    return insert(
        connection,
        "notifications",
        {"brands": brand_id},
        device_id=device_id,
        title=title,
        acknowledged_at=acknowledged_at,
    )


def read_at(connection):
    """{notification title: acknowledged_at} at 0029 (or after the downgrade)."""
    return dict(connection.execute(text("SELECT title, acknowledged_at FROM notifications")).all())


def acknowledgements(connection):
    """{(notification title, device uuid): acknowledged_at} at 0030."""
    return {
        (title, phone): at
        for title, phone, at in connection.execute(
            text(
                "SELECT notifications.title, devices.uuid, notification_acknowledgements"
                ".acknowledged_at FROM notification_acknowledgements"
                " JOIN notifications ON notifications.id = notification_acknowledgements"
                ".notification_id"
                " JOIN devices ON devices.id = notification_acknowledgements.device_id"
            )
        )
    }


def migrate_and_return(url, engine_options=None):
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision=BEFORE)
            with db.engine.begin() as connection:
                shop = insert(connection, "brands", {})
                other_shop = insert(connection, "brands", {})
                phone_a = device(connection, shop, "phone-a")
                phone_b = device(connection, shop, "phone-b")
                device(connection, other_shop, "phone-c")
                notification(connection, shop, phone_a, "A's, read", READ)
                notification(connection, shop, phone_b, "B's, unread")
                notification(connection, shop, None, "Brand-wide, read", READ_LATER)
                notification(connection, shop, None, "Brand-wide, unread")
                notification(connection, other_shop, None, "Other shop's, read", READ)
                before = read_at(connection)
            # To this revision, not the head: a later one's downgrade would run first.
            upgrade(directory=MIGRATIONS, revision=AFTER)
            with db.engine.begin() as connection:
                assert acknowledgements(connection) == {
                    ("A's, read", "phone-a"): before["A's, read"],
                    ("Brand-wide, read", "phone-a"): before["Brand-wide, read"],
                    ("Brand-wide, read", "phone-b"): before["Brand-wide, read"],
                    ("Other shop's, read", "phone-c"): before["Other shop's, read"],
                }
                columns = connection.execute(text("SELECT * FROM notifications")).keys()
                assert "acknowledged_at" not in columns
                # Both phones read the brand-wide one no phone had read, B first: after the
                # downgrade it was read when B read it.
                for phone, at in ((phone_a, READ_LAST), (phone_b, READ_LATER)):
                    connection.execute(
                        text(
                            "INSERT INTO notification_acknowledgements (notification_id, "
                            "device_id, acknowledged_at) SELECT id, :phone, :at FROM "
                            "notifications WHERE title = 'Brand-wide, unread'"
                        ),
                        {"phone": phone, "at": at},
                    )
            downgrade(directory=MIGRATIONS, revision=BEFORE)
            with db.engine.connect() as connection:
                assert read_at(connection) == {
                    **before,
                    "Brand-wide, unread": before["Brand-wide, read"],
                }
                tables = inspect(connection).get_table_names()
                assert "notification_acknowledgements" not in tables
        finally:
            db.session.remove()
            db.engine.dispose()


def test_0030_gives_each_phone_the_acknowledgements_it_had_and_goes_back_on_sqlite(tmp_path):
    migrate_and_return(f"sqlite:///{tmp_path / 'notification_acks.sqlite3'}")


def test_0030_gives_each_phone_the_acknowledgements_it_had_and_goes_back_on_postgresql(
    empty_postgres_schema,
):
    migrate_and_return(POSTGRES_URL, schema_options(empty_postgres_schema))
