"""A PostgreSQL connection that sat idle in the pool is pinged before it is lent again, and one that
died meanwhile is replaced (gateway.ping_after_idle); one lent again at once is not pinged.

PostgreSQL only: the idle connection's backend is really terminated (pg_terminate_backend), as a
database restart or an administrator would.
"""

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

import gateway
from gateway.extensions import db


@pytest.fixture
def pooled_backend(app):
    """The backend pid of the connection the pool will lend next, back in the pool and idle."""
    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):
        pytest.skip("pg_terminate_backend needs PostgreSQL (TEST_DB=postgres)")
    db.session.remove()
    db.engine.dispose()
    with db.engine.connect() as connection:
        pid = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
    return pid


def terminate(pid):
    url = db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        # Wait until the backend is gone, so the pool's next use meets a dead connection.
        for _ in range(100):
            gone = admin.execute(
                "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone()[0]
            if gone:
                return
        raise AssertionError("the backend outlived pg_terminate_backend")


def test_an_idle_connection_that_died_is_replaced_before_it_is_lent(pooled_backend, monkeypatch):
    monkeypatch.setattr(gateway, "PING_AFTER_IDLE_SECONDS", 0)
    terminate(pooled_backend)

    with db.engine.connect() as connection:
        pid = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()

    assert pid != pooled_backend


def test_a_connection_lent_again_at_once_is_not_pinged(pooled_backend, monkeypatch):
    monkeypatch.setattr(gateway, "PING_AFTER_IDLE_SECONDS", 3600)
    terminate(pooled_backend)

    # Not pinged, so the dead connection is lent and its statement fails: the request that meets a
    # fault within the idle window fails alone, and the pool is refreshed for the next one.
    with pytest.raises(OperationalError), db.engine.connect() as connection:
        connection.execute(text("SELECT 1"))
    with db.engine.connect() as connection:
        pid = connection.execute(text("SELECT pg_backend_pid()")).scalar_one()

    assert pid != pooled_backend
