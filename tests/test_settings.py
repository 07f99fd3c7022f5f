"""The settings table: instance/settings.py read, APP_ENV choosing the profile, precedence, names
and values checked.
"""

import logging
import os
import re
from pathlib import Path

import pytest

import config
from gateway import create_app
from gateway.extensions import db
from gateway.webhooks.callback_urls import checked_destination

STRONG_SECRET = "k" * 48
TEN_YEARS = 315360000
README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture
def clean_environment(monkeypatch):
    """No setting (or near-miss of one) from the shell running the tests leaks in."""
    for name in list(config.SETTINGS) + [given for given, _ in config.near_misses(os.environ)]:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def settings_file(tmp_path):
    """Write an instance/settings.py with the given lines; returns its path."""
    path = tmp_path / "settings.py"

    def write(*lines):
        path.write_text("\n".join(lines) + "\n")
        return path

    return write


@pytest.fixture
def build(tmp_path):
    """create_app reading a given settings file, its database in tmp_path; engines disposed
    afterwards.
    """
    built = []

    def make(settings_file, overrides=None):
        app = create_app(overrides, settings_file=settings_file)
        built.append(app)
        return app

    yield make
    for app in built:
        with app.app_context():
            db.engine.dispose()


def test_settings_py_is_read(clean_environment, settings_file, build):
    path = settings_file(
        "PAYMENT_TTL = 600",
        "BASE_URL = 'https://pay.example.com/'",
        "LOGIN_RATE_LIMIT = '3/minute'",
    )

    app = build(path)

    assert app.config["PAYMENT_TTL"] == 600
    assert app.config["BASE_URL"] == "https://pay.example.com"
    assert app.config["LOGIN_RATE_LIMIT"] == "3/minute"
    assert app.config["APP_ENV"] == "development"


def test_app_env_in_settings_py_chooses_the_whole_production_profile(
    clean_environment, settings_file, build, tmp_path
):
    # JOBS_IN_PROCESS off: a request would otherwise start the sweep thread over this empty
    # database.
    path = settings_file(
        "APP_ENV = 'production'",
        f"SECRET_KEY = {STRONG_SECRET!r}",
        "JOBS_IN_PROCESS = False",
        f"DATABASE_URL = 'sqlite:///{tmp_path / 'live.sqlite3'}'",
    )

    app = build(path)

    assert app.config["APP_ENV"] == "production"
    assert (
        app.config["SESSION_COOKIE_SECURE"] is True and app.config["REMEMBER_COOKIE_SECURE"] is True
    )
    assert app.config["ALLOW_PRIVATE_CALLBACKS"] is False
    assert app.config["SQLALCHEMY_DATABASE_URI"] == f"sqlite:///{tmp_path / 'live.sqlite3'}"
    with app.test_request_context():
        refusal, _ = checked_destination("http://127.0.0.1:8000/hook")
    assert refusal is not None
    cookie = app.test_client().get("/panel/sign-in").headers["Set-Cookie"]
    assert "Secure" in cookie


def test_app_env_production_in_settings_py_still_refuses_the_development_secret(
    clean_environment, settings_file, build
):
    path = settings_file("APP_ENV = 'production'")

    with pytest.raises(RuntimeError, match="SECRET_KEY"):
        build(path)


def test_the_environment_beats_settings_py(clean_environment, settings_file, build):
    path = settings_file(
        "PAYMENT_TTL = 600", "APP_ENV = 'production'", f"SECRET_KEY = {STRONG_SECRET!r}"
    )
    clean_environment.setenv("PAYMENT_TTL", "900")
    clean_environment.setenv("APP_ENV", "development")

    app = build(path)

    assert app.config["PAYMENT_TTL"] == 900
    assert app.config["APP_ENV"] == "development"
    assert app.config["SESSION_COOKIE_SECURE"] is False


def test_create_app_overrides_beat_the_environment_and_settings_py(
    clean_environment, settings_file, build
):
    path = settings_file("PAYMENT_TTL = 600")
    clean_environment.setenv("PAYMENT_TTL", "900")

    app = build(path, {"PAYMENT_TTL": 120, "APP_ENV": "testing"})

    assert app.config["PAYMENT_TTL"] == 120
    assert app.config["JOBS_IN_PROCESS"] is False


def test_an_unknown_name_in_settings_py_is_refused_with_a_suggestion(
    clean_environment, settings_file, build
):
    path = settings_file(f"SECERT_KEY = {STRONG_SECRET!r}", "PAYMENT_TTL = 600")

    with pytest.raises(config.SettingsError, match=r"SECERT_KEY \(did you mean SECRET_KEY\?\)"):
        build(path)


def test_a_name_nothing_resembles_is_refused_too(clean_environment, settings_file, build):
    path = settings_file("FROBNICATE = True")

    with pytest.raises(config.SettingsError, match="unknown settings: FROBNICATE"):
        build(path)


def test_lower_case_names_and_flask_settings_in_settings_py_are_accepted(
    clean_environment, settings_file, build
):
    path = settings_file("import os", "helper = 3", "PERMANENT_SESSION_LIFETIME = 3600")

    assert build(path).config["PERMANENT_SESSION_LIFETIME"] == 3600


def test_a_near_miss_environment_variable_is_warned_about(
    clean_environment, settings_file, build, caplog
):
    clean_environment.setenv("SECERT_KEY", STRONG_SECRET)
    clean_environment.setenv("PAYMENT_TLL", "600")

    with caplog.at_level(logging.WARNING):
        build(settings_file())

    warned = " ".join(record.getMessage() for record in caplog.records)
    assert "SECERT_KEY is not a setting; did you mean SECRET_KEY?" in warned
    assert "PAYMENT_TLL is not a setting; did you mean PAYMENT_TTL?" in warned
    assert STRONG_SECRET not in caplog.text


@pytest.mark.parametrize(
    "name, value, problem",
    [
        ("PAYMENT_TTL", "thirty", "PAYMENT_TTL must be a whole number, not 'thirty'"),
        ("PAYMENT_TTL", "0", "PAYMENT_TTL must be at least 1"),
        ("TRUSTED_PROXIES", "-1", "TRUSTED_PROXIES must be at least 0"),
        ("RATELIMIT_ENABLED", "maybe", "RATELIMIT_ENABLED must be true or false"),
        ("API_RATE_LIMIT", "lots", "API_RATE_LIMIT must be a rate"),
        ("MAX_AMOUNT", "ten", "MAX_AMOUNT must be a decimal amount"),
        ("WEBHOOK_TIMEOUT", "soon", "WEBHOOK_TIMEOUT must be a number of seconds"),
        ("BASE_URL", "pay.example.com", "BASE_URL must start with http"),
        ("DEFAULT_TIMEZONE", "Mars/Olympus", "DEFAULT_TIMEZONE must be an IANA time zone"),
        ("LOG_LEVEL", "LOUD", "LOG_LEVEL must be one of DEBUG"),
        # Numbers that overflowed a timedelta later (every payment a 500), or reached a timeout
        # as inf.
        ("PAYMENT_TTL", "9" * 23, f"PAYMENT_TTL must be at most {TEN_YEARS} seconds (10 years)"),
        ("PAYMENT_TTL", str(TEN_YEARS + 1), f"PAYMENT_TTL must be at most {TEN_YEARS} seconds"),
        pytest.param(
            "PAYMENT_TTL",
            "9" * 5000,
            f"PAYMENT_TTL must be at most {TEN_YEARS} seconds",
            id="PAYMENT_TTL-5000-digits",
        ),
        ("WEBHOOK_SECRET_OVERLAP", "99999999999999", "WEBHOOK_SECRET_OVERLAP must be at most"),
        (
            "IDEMPOTENCY_LEASE_SECONDS",
            "inf",
            f"IDEMPOTENCY_LEASE_SECONDS must be at most {TEN_YEARS}",
        ),
        (
            "SMS_PROVIDER_TIMEOUT",
            "nan",
            "SMS_PROVIDER_TIMEOUT must be a number of seconds, not 'nan'",
        ),
        ("WALLET_HTTP_TIMEOUT", "1e400", f"WALLET_HTTP_TIMEOUT must be at most {TEN_YEARS}"),
        ("WEBHOOK_RETRY_SCALE", "inf", "WEBHOOK_RETRY_SCALE must be at most 100"),
        ("NOTIFICATION_RETRY_SCALE", "1e300", "NOTIFICATION_RETRY_SCALE must be at most 100"),
        ("TRUSTED_PROXIES", "1001", "TRUSTED_PROXIES must be at most 1000"),
    ],
)
def test_a_bad_value_in_the_environment_is_reported_at_start_naming_the_setting(
    clean_environment, settings_file, build, name, value, problem
):
    clean_environment.setenv(name, value)

    with pytest.raises(config.SettingsError, match=re.escape(problem)) as raised:
        build(settings_file())

    assert "(from the environment)" in str(raised.value)


def test_a_bad_value_in_settings_py_is_reported_naming_the_file(
    clean_environment, settings_file, build
):
    with pytest.raises(
        config.SettingsError,
        match=re.escape(
            "PAYMENT_TTL must be a whole number, not '30.5' (from instance/settings.py)"
        ),
    ):
        build(settings_file("PAYMENT_TTL = 30.5"))


def test_a_number_too_large_for_a_float_in_settings_py_is_refused_naming_the_setting(
    clean_environment, settings_file, build
):
    with pytest.raises(
        config.SettingsError,
        match=re.escape(f"SMS_PROVIDER_TIMEOUT must be at most {TEN_YEARS} seconds (10 years)"),
    ):
        build(settings_file("SMS_PROVIDER_TIMEOUT = 10**400"))


def api_answers(app):
    """(status of a payment request with an unknown key, status of /healthz): what a malformed
    store turned into two 500s."""
    with app.app_context():
        db.create_all()
    client = app.test_client()
    refused = client.post(
        "/api/v1/payments",
        json={"amount": "1.00", "currency": "BDT"},
        headers={"Authorization": "Bearer gw_live_no-such-key"},
    )
    return refused.status_code, client.get("/healthz").status_code


@pytest.mark.parametrize(
    "url",
    [
        "127.0.0.1:6379",
        "notaurl",
        "http://127.0.0.1:6379/0",
        "redis://127.0.0.1:port/0",
        "redis://127.0.0.1:6379/zero",
        "redis://127.0.0.1:6379/0?socket_timeout=soon",
        "unix://",
    ],
)
def test_a_malformed_redis_url_is_refused_at_start_naming_the_setting_not_its_value(
    clean_environment, settings_file, build, url
):
    clean_environment.setenv("REDIS_URL", url)

    with pytest.raises(config.SettingsError, match="REDIS_URL must be a Redis URL") as raised:
        build(settings_file())

    assert "(from the environment)" in str(raised.value)
    assert repr(url) not in str(raised.value)  # a secret setting: its value is never repeated


def test_the_rate_limit_store_accepts_exactly_the_stores_that_count(
    clean_environment, settings_file, build
):
    from tests.services import REDIS_URL

    for store in ("memory://", "gateway+db://", REDIS_URL, "gateway+" + REDIS_URL):
        app = build(
            settings_file(),
            {"APP_ENV": "testing", "RATELIMIT_ENABLED": True, "RATELIMIT_STORAGE_URI": store},
        )
        assert api_answers(app) == (401, 200), store
    for store in ("notaurl", "unix:///run/redis.sock", "redis+unix:///run/redis.sock", "db://"):
        with pytest.raises(config.SettingsError, match="RATELIMIT_STORAGE_URI must be memory://"):
            build(settings_file(), {"APP_ENV": "testing", "RATELIMIT_STORAGE_URI": store})


def test_a_unix_socket_redis_url_needs_a_rate_limit_store_it_can_count_in(
    clean_environment, settings_file, build, tmp_path
):
    socket = f"unix://{tmp_path / 'redis.sock'}"
    clean_environment.setenv("REDIS_URL", socket)

    with pytest.raises(config.SettingsError, match="set RATELIMIT_STORAGE_URI too"):
        build(settings_file(), {"APP_ENV": "testing"})
    clean_environment.setenv("RATELIMIT_STORAGE_URI", "gateway+db://")
    app = build(settings_file(), {"APP_ENV": "testing", "RATELIMIT_ENABLED": True})

    assert app.config["REDIS_URL"] == socket
    assert api_answers(app) == (401, 200)


def test_production_refuses_a_short_secret_key_fallback(clean_environment, settings_file, build):
    clean_environment.setenv("APP_ENV", "production")
    clean_environment.setenv("SECRET_KEY", STRONG_SECRET)
    clean_environment.setenv("SECRET_KEY_FALLBACKS", "short")

    with pytest.raises(RuntimeError, match="SECRET_KEY_FALLBACKS"):
        build(settings_file())


def test_every_setting_the_code_reads_is_in_the_table():
    root = Path(__file__).resolve().parent.parent / "gateway"
    read = set()
    for source in root.rglob("*.py"):
        read |= set(re.findall(r"""config(?:\[|\.get\()\s*["']([A-Z_]+)["']""", source.read_text()))

    assert read - set(config.SETTINGS) - config.FRAMEWORK_NAMES == set()


def test_the_readme_configuration_table_lists_exactly_the_settings():
    readme = README.read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([A-Z_]+)` \|", section, flags=re.MULTILINE)

    assert listed == list(config.SETTINGS)


def test_an_override_of_none_means_the_default_even_when_the_environment_sets_it(
    clean_environment, settings_file, build
):
    clean_environment.setenv("REDIS_URL", "redis://127.0.0.1:6379/9")

    app = build(settings_file(), {"APP_ENV": "testing", "REDIS_URL": None})

    assert (
        app.config["REDIS_URL"] is None and app.config["RATELIMIT_STORAGE_URI"] == "gateway+db://"
    )


def test_passwords_are_hashed_with_scrypt_unless_the_profile_is_testing(
    clean_environment, settings_file, build
):
    production = config.load_settings(
        {"APP_ENV": "production"}, environ={}, settings_file=settings_file()
    )[0]
    development = config.load_settings({}, environ={}, settings_file=settings_file())[0]
    testing = config.load_settings(
        {"APP_ENV": "testing"}, environ={}, settings_file=settings_file()
    )[0]

    assert production["PASSWORD_HASH_METHOD"] == development["PASSWORD_HASH_METHOD"] == "scrypt"
    assert testing["PASSWORD_HASH_METHOD"] == "pbkdf2:sha256:1"


@pytest.mark.parametrize(
    "method", ["scrypt", "scrypt:16384:8:1", "pbkdf2", "pbkdf2:sha256", "pbkdf2:sha512:600000"]
)
def test_a_werkzeug_hash_method_is_accepted_and_hashes_with_it(
    clean_environment, settings_file, build, method
):
    app = build(settings_file(f"PASSWORD_HASH_METHOD = {method!r}"), {"APP_ENV": "testing"})

    with app.app_context():
        from gateway.accounts.models.user import User

        user = User()
        user.set_password("correct horse battery")

    assert user.password_hash.startswith(method.split(":")[0] + ":")
    assert user.check_password("correct horse battery") and not user.check_password("wrong")


@pytest.mark.parametrize(
    "method",
    [
        "md5",
        "plain",
        "pbkdf2:nohash",
        "pbkdf2:sha256:0",
        "scrypt:x",
        "scrypt:1:2:3:4",
        "pbkdf2:sha256:1:2",
        "",
    ],
)
def test_an_unknown_hash_method_is_refused_naming_the_setting(
    clean_environment, settings_file, method
):
    with pytest.raises(
        config.SettingsError, match="PASSWORD_HASH_METHOD must be a werkzeug hash method"
    ):
        config.load_settings(
            {"APP_ENV": "testing"},
            environ={},
            settings_file=settings_file(f"PASSWORD_HASH_METHOD = {method!r}"),
        )
