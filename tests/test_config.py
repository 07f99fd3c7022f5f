"""Settings from the environment: production secrets, APP_ENV, DATABASE_URL and the rate-limit
switch.

create_app reads the environment (config.load_settings) each time it runs; each test sets variables
with monkeypatch (reloading config.py too, which is harmless) and the fixture puts everything back
afterwards.
"""

import importlib

import pytest

import config
from gateway import create_app
from gateway.extensions import db
from gateway.rate_limits import limits_enabled

VARIABLES = (
    "APP_ENV",
    "SECRET_KEY",
    "DATABASE_URL",
    "TEST_DATABASE_URL",
    "RATELIMIT_ENABLED",
    "REDIS_URL",
    "API_RATE_LIMIT",
)
STRONG_SECRET = "k" * 48


@pytest.fixture
def environment(monkeypatch):
    """Set environment variables and re-read config.py; everything is put back afterwards."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def load(**values):
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        importlib.reload(config)
        return config

    yield load
    monkeypatch.undo()
    importlib.reload(config)


# --- production refuses to start without a real secret ------------------------------------------


@pytest.mark.parametrize("secret", [None, "", config.DEV_SECRET, "short-secret", "s" * 31])
def test_production_refuses_to_start_without_a_strong_secret_key(environment, secret):
    values = {"APP_ENV": "production"}
    if secret is not None:
        values["SECRET_KEY"] = secret
    environment(**values)

    with pytest.raises(RuntimeError, match="SECRET_KEY"):
        create_app()


def test_production_starts_with_a_secret_key_of_32_characters_or_more(environment):
    environment(APP_ENV="production", SECRET_KEY="s" * 32)

    app = create_app()

    assert (app.config["APP_ENV"], app.config["SECRET_KEY"]) == ("production", "s" * 32)
    assert app.config["ALLOW_PRIVATE_CALLBACKS"] is False
    assert app.config["SESSION_COOKIE_SECURE"] is True


def test_app_env_is_read_without_regard_to_case(environment):
    environment(APP_ENV="Production")

    with pytest.raises(RuntimeError, match="SECRET_KEY"):
        create_app()


@pytest.mark.parametrize("env", ["development", "testing"])
def test_other_environments_start_with_the_development_secret(environment, env):
    environment(APP_ENV=env)

    app = create_app()

    assert app.config["APP_ENV"] == env


# --- APP_ENV
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["staging", "prod", "dev"])
def test_an_unknown_app_env_is_refused(environment, name):
    environment(APP_ENV=name, SECRET_KEY=STRONG_SECRET)

    with pytest.raises(RuntimeError, match="APP_ENV must be one of"):
        create_app()
    with pytest.raises(RuntimeError, match="APP_ENV must be one of"):
        create_app({"APP_ENV": name})


def test_without_app_env_the_app_is_development(environment):
    environment()

    assert create_app().config["APP_ENV"] == "development"


# --- DATABASE_URL
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    ["postgresql://gw:pw@db.internal:5432/gateway", "postgres://gw:pw@db.internal:5432/gateway"],
)
def test_a_postgres_database_url_is_rewritten_for_psycopg(environment, given):
    environment(APP_ENV="production", SECRET_KEY=STRONG_SECRET, DATABASE_URL=given)

    app = create_app()

    assert (
        app.config["SQLALCHEMY_DATABASE_URI"]
        == "postgresql+psycopg://gw:pw@db.internal:5432/gateway"
    )
    assert app.config["SQLALCHEMY_ENGINE_OPTIONS"] == {}  # gateway.ping_after_idle, no pre-ping
    with app.app_context():
        assert db.engine.dialect.driver == "psycopg"


@pytest.mark.parametrize(
    "given", ["postgresql+psycopg://gw@db/gateway", "sqlite:////var/lib/gateway.sqlite3"]
)
def test_other_database_urls_are_kept_as_given(environment, given):
    environment(DATABASE_URL=given)

    assert create_app().config["SQLALCHEMY_DATABASE_URI"] == given


def test_without_database_url_the_database_is_sqlite_in_the_instance_folder(environment):
    loaded = environment()

    uri = create_app().config["SQLALCHEMY_DATABASE_URI"]

    assert uri == f"sqlite:///{loaded.INSTANCE_DIR / 'gateway.sqlite3'}"
    # No pool_pre_ping (a file cannot go stale); PRAGMAs are set on connect (gateway.tune_sqlite).
    assert create_app().config["SQLALCHEMY_ENGINE_OPTIONS"] == {}


# --- RATELIMIT_ENABLED
# -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, enabled",
    [
        (None, True),
        ("false", False),
        ("0", False),
        ("no", False),
        ("off", False),
        ("true", True),
        ("1", True),
    ],
)
def test_ratelimit_enabled_switches_limits_on_and_off(environment, value, enabled):
    values = {"APP_ENV": "production", "SECRET_KEY": STRONG_SECRET}
    if value is not None:
        values["RATELIMIT_ENABLED"] = value
    environment(**values)

    app = create_app()

    assert app.config["RATELIMIT_ENABLED"] is enabled
    assert limits_enabled(app) is enabled


@pytest.mark.parametrize("value, statuses", [("false", [200, 200, 200]), ("true", [200, 429, 429])])
def test_ratelimit_enabled_false_lets_every_api_request_through(
    environment, app, auth, value, statuses
):
    environment(
        APP_ENV="testing",
        TEST_DATABASE_URL=app.config["SQLALCHEMY_DATABASE_URI"],
        RATELIMIT_ENABLED=value,
        API_RATE_LIMIT="1/minute",
    )
    served = create_app()
    try:
        client = served.test_client()
        answers = [client.get("/api/v1/payments", headers=auth).status_code for _ in range(3)]
    finally:
        with served.app_context():
            db.session.remove()
            db.engine.dispose()

    assert answers == statuses
