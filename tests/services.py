"""Reaching the real PostgreSQL and Redis the suite runs against; a missing one skips, except under CI."""

import os

import pytest

POSTGRES_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def unavailable(what, error):
    """Skip with a reason on a developer's machine; fail under CI=true, where every service must run."""
    message = f"{what} is not reachable ({error.__class__.__name__}: {error})"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — under CI a missing service is a failure", pytrace=False)
    pytest.skip(message)


def postgres_reachable():
    """Whether the test PostgreSQL answers; raises the connection error otherwise."""
    import psycopg

    dsn = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, connect_timeout=3) as connection:
        connection.execute("SELECT 1")


def redis_client():
    """A client of the test Redis database, checked with a PING."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    client.ping()
    return client
