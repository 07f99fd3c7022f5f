"""`flask db upgrade` on an empty database gives exactly the schema the models declare."""

import logging.config
import uuid
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import upgrade
from sqlalchemy import create_engine, inspect, text

from gateway import create_app
from gateway.extensions import db
from tests.services import POSTGRES_URL, postgres_reachable, unavailable

MIGRATIONS = str(Path(__file__).resolve().parent.parent / "migrations")


@pytest.fixture(autouse=True)
def keep_test_logging(monkeypatch):
    """migrations/env.py loads alembic.ini's logging setup, which would close pytest's log
    handlers."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


def migration_app(url, engine_options=None):
    """An app on the database at `url`, without Redis or rate limits, for running migrations."""
    return create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": url,
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
            "SQLALCHEMY_ENGINE_OPTIONS": engine_options or {},
        }
    )


def migrated_differences(url, engine_options=None):
    """Run every migration on the empty database at `url`, then list how it differs from the
    models."""
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS)
            with db.engine.connect() as connection:
                context = MigrationContext.configure(connection, opts={"compare_type": True})
                return compare_metadata(context, db.metadata)
        finally:
            db.session.remove()
            db.engine.dispose()


def rules(url, engine_options=None, migrate=True):
    """The CHECK constraints and indexes (with any partial-index WHERE) of a database built by the
    migrations or by the models, as the database reports them: Alembic's comparison looks at
    neither."""
    app = migration_app(url, engine_options)
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS) if migrate else db.create_all()
            with db.engine.connect() as connection:
                inspector = inspect(connection)
                found = set()
                for table in db.metadata.tables:
                    for check in inspector.get_check_constraints(table):
                        found.add(
                            (table, "check", check["name"], " ".join(str(check["sqltext"]).split()))
                        )
                    for index in inspector.get_indexes(table):
                        where = {
                            key: str(value)
                            for key, value in index.get("dialect_options", {}).items()
                            if key.endswith("_where")
                        }
                        found.add(
                            (
                                table,
                                "index",
                                index["name"],
                                tuple(index["column_names"]),
                                bool(index["unique"]),
                                tuple(sorted(where.items())),
                            )
                        )
                return found
        finally:
            db.session.remove()
            db.engine.dispose()


def assert_same_rules(migrated, declared):
    """Fail naming each CHECK or index that only one of the two databases has, or has
    differently."""
    assert declared, (
        "the models declare no CHECK constraint or index: the comparison would prove nothing"
    )
    lines = [f"only migrated: {rule}" for rule in sorted(migrated - declared, key=str)]
    lines += [f"only in the models: {rule}" for rule in sorted(declared - migrated, key=str)]
    if lines:
        pytest.fail("migrations differ from the models:\n" + "\n".join(lines), pytrace=False)


def assert_no_differences(differences):
    """Fail with one short line per difference (operation and object names), not pages of reprs."""
    lines = []
    for difference in differences:
        for operation, *objects in difference if isinstance(difference, list) else [difference]:
            names = [
                getattr(item, "name", None) or str(item) for item in objects if item is not None
            ]
            lines.append(f"{operation} {' '.join(map(str, names[:3]))}")
    if lines:
        pytest.fail(
            "migrations differ from the models (regenerate the revision):\n" + "\n".join(lines),
            pytrace=False,
        )


def test_upgrade_on_an_empty_sqlite_file_matches_the_models(tmp_path):
    differences = migrated_differences(f"sqlite:///{tmp_path / 'migrated.sqlite3'}")

    assert_no_differences(differences)


def test_sqlite_checks_and_partial_indexes_match_the_models(tmp_path):
    migrated = rules(f"sqlite:///{tmp_path / 'migrated.sqlite3'}")
    declared = rules(f"sqlite:///{tmp_path / 'declared.sqlite3'}", migrate=False)

    assert_same_rules(migrated, declared)


@pytest.fixture
def postgres_schemas():
    """Make fresh, empty schemas in the test PostgreSQL database, dropped afterwards; each call
    returns a name.
    """
    try:
        postgres_reachable()
    except Exception as error:  # noqa: BLE001 - any failure to connect
        unavailable("PostgreSQL", error)
    engine, made = create_engine(POSTGRES_URL), []

    def make():
        made.append(f"migration_{uuid.uuid4().hex[:12]}")
        with engine.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{made[-1]}"'))
        return made[-1]

    yield make
    with engine.begin() as connection:
        for name in made:
            connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
    engine.dispose()


@pytest.fixture
def empty_postgres_schema(postgres_schemas):
    """A fresh, empty schema in the test PostgreSQL database, dropped afterwards; yields its
    name."""
    return postgres_schemas()


def schema_options(name):
    """Engine options that put every table of a connection in schema `name`."""
    return {"connect_args": {"options": f"-csearch_path={name}"}}


def test_upgrade_on_an_empty_postgresql_schema_matches_the_models(empty_postgres_schema):
    differences = migrated_differences(POSTGRES_URL, schema_options(empty_postgres_schema))

    assert_no_differences(differences)


def test_postgresql_checks_and_partial_indexes_match_the_models(postgres_schemas):
    migrated = rules(POSTGRES_URL, schema_options(postgres_schemas()))
    declared = rules(POSTGRES_URL, schema_options(postgres_schemas()), migrate=False)

    assert_same_rules(migrated, declared)
