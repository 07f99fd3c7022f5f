"""Fixtures: an app per engine (SQLite file, or PostgreSQL with TEST_DB=postgres), a clean database
per test.
"""

import os
import socket
from pathlib import Path

import pytest
from sqlalchemy import event, text

from gateway import create_app
from gateway.accounts.api_keys import generate_key
from gateway.accounts.models.brand import Brand
from gateway.extensions import db
from tests.clean_tree import (  # noqa: F401 - hooks: the suite must leave the git work tree clean
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_terminal_summary,
)
from tests.local_servers import serving, smtp_serving
from tests.services import POSTGRES_URL, postgres_reachable, unavailable

ENGINE = os.environ.get("TEST_DB", "sqlite")
TESTS = Path(__file__).resolve().parent
# Files whose rules the database engine cannot change (parsing, formatting, settings, the deployment
# kit, documents, headers): marked `engine_independent`, and `make test-postgres` leaves them to the
# SQLite pass.
ENGINE_INDEPENDENT = {
    "test_clean_tree.py",
    "test_config.py",
    "test_settings.py",
    "test_deploy.py",
    "test_deploy_nginx.py",
    "test_deploy_gunicorn.py",
    "api/test_openapi.py",
    "api/test_openapi_strictness.py",
    "api/test_query_schemas.py",
    "api/test_path_guard.py",
    "api/test_body_rules.py",
    "sms/test_sms_parsing.py",
    "test_numerals.py",
    "checkout/test_checkout_presenters.py",
    "checkout/test_checkout_help_texts.py",
    "test_request_log.py",
    "test_proxy.py",
    "panel/test_formatting.py",
    "panel/test_bangla_pages.py",
    "panel/test_small_things.py",
    # The source's imports, commits and job paths, read as text.
    "test_architecture.py",
    # Who may open each route is decided by its decorator before any query; each action's own
    # work is tested on both engines by its own file.
    "panel/test_roles_routes.py",
    # Databases of their own whatever the pass's engine (a SQLite file, a PostgreSQL schema, or
    # both, named by the test): the PostgreSQL pass would only run them a second time, the same.
    "test_migrations.py",
    "test_backup.py",
    "test_operator_docs.py",
    "panel/test_roles_migration.py",
    "sms/test_chain_wallets_migration.py",
    "webhooks/test_endpoints_migration.py",
}

# Files that mostly wait on processes of their own (the deployment kit's wrapper, gunicorn, nginx,
# RQ workers, php, a nested pytest) or on the clock: marked `beside_browser`, and `make test` runs
# them on SQLite in the browser pass, which mostly waits too, rather than in the SQLite pass that
# has the rest of the suite to get through. The PostgreSQL pass runs those the engine can change.
BESIDE_BROWSER = {
    "test_doctor.py",
    "test_deploy_nginx.py",
    "test_deploy_gunicorn.py",
    "test_worker_outages.py",
    "test_clean_tree.py",
    "test_deploy.py",
    "test_idempotency_crash.py",
    "test_sqlite_writers.py",
    "compat/test_compat_php_clients.py",
}


def pytest_collection_modifyitems(config, items):
    """Mark every test of an ENGINE_INDEPENDENT file, and of a BESIDE_BROWSER one."""
    for item in items:
        path = item.path.relative_to(TESTS).as_posix()
        if path in ENGINE_INDEPENDENT:
            item.add_marker(pytest.mark.engine_independent)
        if path in BESIDE_BROWSER:
            item.add_marker(pytest.mark.beside_browser)


def database_url(tmp_path_factory):
    """The engine this run tests: a SQLite file (so threads share it) or the test PostgreSQL."""
    if ENGINE == "postgres":
        try:
            postgres_reachable()
        except Exception as error:  # noqa: BLE001 - any failure to connect
            unavailable("PostgreSQL", error)
        return POSTGRES_URL
    return f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite3'}"


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    """One application for the session, its schema created from the models."""
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": database_url(tmp_path_factory),
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
            "WTF_CSRF_ENABLED": True,
            "SERVER_NAME": None,
        }
    )
    with app.app_context():
        db.drop_all()
        db.create_all()
    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(autouse=True)
def clean_database(app):
    """Every test starts with empty tables and an application context."""
    with app.app_context():
        yield
        db.session.remove()
        empty_every_table()


def empty_every_table():
    """DELETE every table's rows, children first: on PostgreSQL one round trip, far cheaper than
    TRUNCATE.
    """
    deletes = [f"DELETE FROM {table.name}" for table in reversed(db.metadata.sorted_tables)]
    with db.engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql("; ".join(deletes))
        else:
            for delete in deletes:
                connection.execute(text(delete))


@pytest.fixture
def sql_statements(app):
    """Every SQL statement the database receives from here on, in order."""
    seen = []

    def record(conn, cursor, statement, *args):
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    yield seen
    event.remove(db.engine, "before_cursor_execute", record)


@pytest.fixture
def live_server(app):
    """The app behind a real threaded HTTP server on a free loopback port; yields its origin."""
    with serving(app) as server:
        yield server.origin


@pytest.fixture
def closed_port():
    """A loopback port nothing listens on (a connection is refused): a receiver, Redis or API that
    is down. It stays bound, never listening, for the test, so no server of the suite (this test's
    own included) can be given it meanwhile."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.fixture
def smtp_server():
    """A real local SMTP server (aiosmtpd) that collects messages: `.messages`, `.wait_for(n)`,
    `.configure(brand)` points the brand's SMTP settings at it (tests/local_servers.py)."""
    with smtp_serving() as server:
        yield server


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def brand():
    """The brand most tests act for."""
    brand = Brand(name="Test Shop", slug="test-shop", currencies="BDT,USD")
    db.session.add(brand)
    db.session.commit()
    return brand


@pytest.fixture
def other_brand():
    """A second brand, to prove the first never sees its rows."""
    brand = Brand(name="Other Shop", slug="other-shop")
    db.session.add(brand)
    db.session.commit()
    return brand


@pytest.fixture
def make_key():
    """Generate a key for a brand with given scopes; returns the Authorization header dict."""
    counter = iter(range(10_000))

    def make(brand, scopes=("read", "write")):
        _, secret = generate_key(brand, f"key-{next(counter)}", list(scopes))
        return {"Authorization": f"Bearer {secret}"}

    return make


@pytest.fixture
def auth(brand, make_key):
    """Authorization header of a read+write key of `brand`."""
    return make_key(brand)


@pytest.fixture
def phone(brand):
    """A paired device of `brand` and its AES key."""
    from tests.factories import paired_device

    device, _, aes_key = paired_device(brand)
    return device, aes_key
