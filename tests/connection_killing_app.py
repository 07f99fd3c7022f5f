"""Test-only WSGI app for a gunicorn a test starts: terminates the request's own PostgreSQL backend
at one moment.

Nothing here is imported by the gateway. Only requests sending `X-Test-Kill-Connection` are touched,
and the fault is real: pg_terminate_backend from a second connection, as an administrator or a
failover would. KILL_AT picks the moment: `after_commit` (the first statement after the commit of
the request's change to a payment) or `teardown` (after the response was made, the session still
holding an open transaction), or `answer` (as a keyed request stores its answer, before the one
commit of its work and answer).
"""

import os

import psycopg
from flask import g, has_request_context, request
from sqlalchemy import event

from gateway import create_app
from gateway.extensions import db

DATABASE_URL = os.environ["KILL_DATABASE_URL"]
KILL_AT = os.environ["KILL_AT"]

# TESTING off: errors are handled as in production, not propagated to a test client.
app = create_app(
    {
        "APP_ENV": "testing",
        "TESTING": False,
        "SQLALCHEMY_DATABASE_URI": DATABASE_URL,
        "REDIS_URL": None,
        "RATELIMIT_ENABLED": False,
        "IDEMPOTENCY_LEASE_SECONDS": float(os.environ.get("KILL_LEASE_SECONDS", "1")),
    }
)


# How a keyed request stores its answer: PostgreSQL inserts its record with the answer (the key was
# held with a lock), SQLite updates the reservation it committed first.
ANSWER_STATEMENTS = ("UPDATE IDEMPOTENCY_RECORDS", "INSERT INTO IDEMPOTENCY_RECORDS")


def targeted():
    return has_request_context() and "X-Test-Kill-Connection" in request.headers


def terminate(backend_pid):
    """Terminate a backend from a connection of our own."""
    with psycopg.connect(
        DATABASE_URL.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (backend_pid,))


@event.listens_for(db.session, "after_commit")
def arm_after_commit(session):
    if KILL_AT == "after_commit" and targeted() and g.pop("wrote_payment", False):
        g.kill_next_statement = True


with app.app_context():

    @event.listens_for(db.engine, "before_cursor_execute")
    def kill_before_statement(conn, cursor, statement, *args):
        if targeted() and statement.lstrip().upper().startswith("UPDATE PAYMENTS"):
            g.wrote_payment = True
        if (
            targeted()
            and KILL_AT == "answer"
            and statement.lstrip().upper().startswith(ANSWER_STATEMENTS)
        ):
            g.kill_next_statement = True
        if targeted() and g.pop("kill_next_statement", False):
            terminate(conn.connection.dbapi_connection.info.backend_pid)


@app.teardown_request
def kill_at_teardown(exception):
    session = db.session()
    if KILL_AT == "teardown" and targeted() and session.in_transaction():
        terminate(session.connection().connection.dbapi_connection.info.backend_pid)
