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


def postgres_connection(url, **options):
    """A psycopg connection to the database of `url`, the database created first if the server has
    none of that name."""
    import psycopg

    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    try:
        return psycopg.connect(dsn, connect_timeout=3, **options)
    except psycopg.OperationalError as error:
        base, name = dsn.split("?", 1)[0].rsplit("/", 1)
        if f'"{name}" does not exist' not in str(error):
            raise
        with psycopg.connect(f"{base}/postgres", connect_timeout=3, autocommit=True) as server:
            server.execute(f'CREATE DATABASE "{name}"')
        return psycopg.connect(dsn, connect_timeout=3, **options)


def postgres_reachable():
    """Whether the test PostgreSQL answers; raises the connection error otherwise.

    A database other than the server's own `test` is created on first use: `make test` gives each
    of its passes, running side by side, a database of its own.
    """
    with postgres_connection(POSTGRES_URL) as connection:
        connection.execute("SELECT 1")


def own_postgres_url(suffix):
    """The test PostgreSQL's URL with `suffix` added to the database's name: one test's own
    database beside its pass's."""
    base, mark, query = POSTGRES_URL.partition("?")
    return f"{base}{suffix}{mark}{query}"


def fresh_postgres(url):
    """The database of `url` empty: created on first use, what a previous run left dropped."""
    with postgres_connection(url, autocommit=True) as connection:
        connection.execute("DROP SCHEMA IF EXISTS public CASCADE")
        connection.execute("CREATE SCHEMA public")


def redis_client():
    """A client of the test Redis database, checked with a PING."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    client.ping()
    return client
