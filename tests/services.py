"""Reaching the real PostgreSQL and Redis the suite runs against; a missing one skips, except under
CI.
"""

import os

import pytest

POSTGRES_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def unavailable(what, error):
    """Skip with a reason on a developer's machine; fail under CI=true, where every service must
    run.
    """
    message = f"{what} is not reachable ({error.__class__.__name__}: {error})"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — under CI a missing service is a failure", pytrace=False)
    pytest.skip(message)


def postgres_reachable():
    """Whether the test PostgreSQL answers; raises the connection error otherwise.

    A database other than the server's own `test` is created on first use: `make test` gives each
    of its passes, running side by side, a database of its own.
    """
    import psycopg

    dsn = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    try:
        connection = psycopg.connect(dsn, connect_timeout=3)
    except psycopg.OperationalError as error:
        base, name = dsn.split("?", 1)[0].rsplit("/", 1)
        if f'"{name}" does not exist' not in str(error):
            raise
        with psycopg.connect(f"{base}/postgres", connect_timeout=3, autocommit=True) as server:
            server.execute(f'CREATE DATABASE "{name}"')
        connection = psycopg.connect(dsn, connect_timeout=3)
    with connection:
        connection.execute("SELECT 1")


def redis_client():
    """A client of the test Redis database, checked with a PING."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    client.ping()
    return client
