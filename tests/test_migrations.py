"""`flask db upgrade` on an empty database gives exactly the schema the models declare."""
import logging.config
import uuid
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import upgrade
from sqlalchemy import create_engine, text

from gateway import create_app
from gateway.extensions import db
from tests.services import POSTGRES_URL, postgres_reachable, unavailable

MIGRATIONS = str(Path(__file__).resolve().parent.parent / "migrations")


@pytest.fixture(autouse=True)
def keep_test_logging(monkeypatch):
    """migrations/env.py loads alembic.ini's logging setup, which would close pytest's log handlers."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


def migrated_differences(url, engine_options=None):
    """Run every migration on the empty database at `url`, then list how it differs from the models."""
    app = create_app({"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": url, "REDIS_URL": None,
                      "RATELIMIT_ENABLED": False, "SQLALCHEMY_ENGINE_OPTIONS": engine_options or {}})
    with app.app_context():
        try:
            upgrade(directory=MIGRATIONS)
            with db.engine.connect() as connection:
                context = MigrationContext.configure(connection, opts={"compare_type": True})
                return compare_metadata(context, db.metadata)
        finally:
            db.session.remove()
            db.engine.dispose()


def assert_no_differences(differences):
    """Fail with one short line per difference (operation and object names), not pages of reprs."""
    lines = []
    for difference in differences:
        for operation, *objects in difference if isinstance(difference, list) else [difference]:
            names = [getattr(item, "name", None) or str(item) for item in objects if item is not None]
            lines.append(f"{operation} {' '.join(map(str, names[:3]))}")
    if lines:
        pytest.fail("migrations differ from the models (regenerate the revision):\n" + "\n".join(lines), pytrace=False)


def test_upgrade_on_an_empty_sqlite_file_matches_the_models(tmp_path):
    differences = migrated_differences(f"sqlite:///{tmp_path / 'migrated.sqlite3'}")

    assert_no_differences(differences)


@pytest.fixture
def empty_postgres_schema():
    """A fresh, empty schema in the test PostgreSQL database, dropped afterwards; yields its name."""
    try:
        postgres_reachable()
    except Exception as error:  # noqa: BLE001 - any failure to connect
        unavailable("PostgreSQL", error)
    name = f"migration_{uuid.uuid4().hex[:12]}"
    engine = create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
    yield name
    with engine.begin() as connection:
        connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
    engine.dispose()


def test_upgrade_on_an_empty_postgresql_schema_matches_the_models(empty_postgres_schema):
    options = {"connect_args": {"options": f"-csearch_path={empty_postgres_schema}"}}

    differences = migrated_differences(POSTGRES_URL, options)

    assert_no_differences(differences)
