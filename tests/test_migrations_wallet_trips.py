"""Migration 0025_wallet_trips gives each wallet trip its own amount and fee, copied from its
payment, and turns a settled trip noted "Paid after the payment was …" into money that did not
apply; it goes back."""

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

LATE = "Paid after the payment was expired: refund it."
STALE = "bKash could not be reached"  # noted while the trip waited, then it paid


def fill_at_0024(connection):
    """A ৳510 payment (৳10 fee) paid by one bKash trip (an old note on it), another trip paid after
    the payment closed, one open."""
    made = {}
    made["brands"] = insert(connection, "brands", made)
    made["payment_methods"] = insert(connection, "payment_methods", made, number="01712345678")
    made["payments"] = insert(
        connection,
        "payments",
        made,
        currency="BDT",
        status="completed",
        amount=50000,
        amount_bdt=50000,
        fee=1000,
        amount_paid=51000,
        provider_trx_id="BKX1",
    )
    for number, (state, note) in enumerate(
        (("settled", STALE), ("settled", LATE), ("started", None))
    ):
        insert(
            connection,
            "wallet_payments",
            made,
            provider="bkash",
            provider_payment_id=f"TR{number}",
            state=state,
            last_error=note,
        )


def trips(connection):
    return connection.execute(
        text(
            "SELECT state, amount, fee, paid_amount, provider_trx_id FROM wallet_payments "
            "ORDER BY id"
        )
    ).all()


def migrate_with_trips(url, engine_options=None):
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision="0024_wallet_apis")
            with db.engine.begin() as connection:
                fill_at_0024(connection)
            upgrade(directory=MIGRATIONS, revision="0025_wallet_trips")
            with db.engine.begin() as connection:
                assert trips(connection) == [
                    ("settled", 51000, 1000, 51000, "BKX1"),
                    ("unapplied", 51000, 1000, 51000, None),
                    ("started", 51000, 1000, None, None),
                ]
            downgrade(directory=MIGRATIONS, revision="0024_wallet_apis")
            with db.engine.begin() as connection:
                states = connection.execute(text("SELECT state, last_error FROM wallet_payments"))
                assert sorted(states.all(), key=str) == sorted(
                    [
                        ("settled", STALE),
                        ("settled", LATE),
                        ("started", None),
                    ],
                    key=str,
                )
                assert (
                    "amount" not in connection.execute(text("SELECT * FROM wallet_payments")).keys()
                )
        finally:
            db.session.remove()
            db.engine.dispose()


def test_0025_gives_trips_their_amount_and_goes_back_on_sqlite(tmp_path):
    migrate_with_trips(f"sqlite:///{tmp_path / 'trips.sqlite3'}")


def test_0025_gives_trips_their_amount_and_goes_back_on_postgresql(empty_postgres_schema):
    migrate_with_trips(POSTGRES_URL, schema_options(empty_postgres_schema))
