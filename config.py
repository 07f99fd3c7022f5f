"""Settings read from the environment, in one place, with safe development defaults."""
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
INSTANCE_DIR = BASE_DIR / "instance"
DEV_SECRET = "dev-secret-change-me"


def env_bool(name, default):
    """Read a boolean switch such as RATELIMIT_ENABLED=false."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def database_url(default_file):
    """DATABASE_URL, normalised to the psycopg 3 driver, or SQLite in instance/."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        return f"sqlite:///{INSTANCE_DIR / default_file}"
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


class Config:
    """Defaults shared by every environment."""

    APP_ENV = "development"
    SECRET_KEY = os.environ.get("SECRET_KEY", DEV_SECRET)
    SQLALCHEMY_DATABASE_URI = database_url("gateway.sqlite3")
    # PostgreSQL connections can go stale behind a restart; SQLite files cannot.
    SQLALCHEMY_ENGINE_OPTIONS = {"pool_pre_ping": True} if SQLALCHEMY_DATABASE_URI.startswith("postgresql") else {}
    REDIS_URL = os.environ.get("REDIS_URL") or None
    BASE_URL = os.environ.get("BASE_URL", "http://127.0.0.1:5000").rstrip("/")
    API_KEY_PREFIX = os.environ.get("API_KEY_PREFIX", "gw_live_")
    PAYMENT_TTL = int(os.environ.get("PAYMENT_TTL", 30 * 60))
    MAX_AMOUNT = os.environ.get("MAX_AMOUNT", "1000000.00")
    ALLOW_PRIVATE_CALLBACKS = env_bool("ALLOW_PRIVATE_CALLBACKS", True)
    SMS_PROVIDER_URL = os.environ.get("SMS_PROVIDER_URL") or None
    # Background work (docs/jobs.md): a claim on a delivery lasts this long; sweeps run this often.
    WEBHOOK_LEASE_SECONDS = int(os.environ.get("WEBHOOK_LEASE_SECONDS", 60))
    SWEEP_INTERVAL = int(os.environ.get("SWEEP_INTERVAL", 15))
    # Multiplies the webhook retry schedule (1 min … 24 h); only a test or a staging setup lowers it.
    WEBHOOK_RETRY_SCALE = float(os.environ.get("WEBHOOK_RETRY_SCALE", 1))
    # Per receiving host: a host that has not answered within WEBHOOK_SLOW_SECONDS of late gets this many
    # attempts in flight at once, the rest parked until one ends, so a hanging receiver cannot hold every worker.
    WEBHOOK_SLOW_HOST_CONCURRENCY = int(os.environ.get("WEBHOOK_SLOW_HOST_CONCURRENCY", 1))
    WEBHOOK_SLOW_SECONDS = float(os.environ.get("WEBHOOK_SLOW_SECONDS", 5))
    JOBS_IN_PROCESS = True
    API_RATE_LIMIT = os.environ.get("API_RATE_LIMIT", "100/second")
    API_AUTH_FAILURE_LIMIT = os.environ.get("API_AUTH_FAILURE_LIMIT", "30/minute")
    LOGIN_RATE_LIMIT = os.environ.get("LOGIN_RATE_LIMIT", "10/minute")
    CHECKOUT_CLAIM_RATE_LIMIT = os.environ.get("CHECKOUT_CLAIM_RATE_LIMIT", "10/hour")
    RATELIMIT_ENABLED = env_bool("RATELIMIT_ENABLED", True)
    RATELIMIT_HEADERS_ENABLED = True
    # How many reverse proxies (TLS terminators, load balancers) stand in front of the app; 0 trusts no
    # X-Forwarded-* header. Set it to the exact count: one too many lets clients forge their address.
    TRUSTED_PROXIES = int(os.environ.get("TRUSTED_PROXIES", 0))
    MAX_CONTENT_LENGTH = 1024 * 1024
    JSON_SORT_KEYS = False
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    REMEMBER_COOKIE_HTTPONLY = True
    BABEL_DEFAULT_LOCALE = "en"
    BABEL_DEFAULT_TIMEZONE = "UTC"
    DEFAULT_TIMEZONE = "Asia/Dhaka"

    API_TITLE = "Payment Gateway API"
    API_VERSION = "1.0.0"
    OPENAPI_VERSION = "3.0.3"
    OPENAPI_URL_PREFIX = "/api/v1"
    OPENAPI_JSON_PATH = "openapi.json"


class Development(Config):
    """A single machine: SQLite, in-process jobs, private callbacks allowed."""


class Testing(Config):
    """The test suite: its own database, no CSRF token juggling in API tests."""

    APP_ENV = "testing"
    TESTING = True
    SECRET_KEY = "testing-secret"
    SQLALCHEMY_DATABASE_URI = os.environ.get("TEST_DATABASE_URL") or "sqlite://"
    RATELIMIT_ENABLED = env_bool("RATELIMIT_ENABLED", False)
    # Wake-ups stay queued in the database unless a test runs them: no stray threads between tests.
    JOBS_IN_PROCESS = False


class Production(Config):
    """Behind gunicorn: secrets are required, private callbacks refused by default."""

    APP_ENV = "production"
    ALLOW_PRIVATE_CALLBACKS = env_bool("ALLOW_PRIVATE_CALLBACKS", False)
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    REMEMBER_COOKIE_SECURE = SESSION_COOKIE_SECURE


ENVIRONMENTS = {"development": Development, "testing": Testing, "production": Production}


def config_for(app_env=None):
    """The configuration class for APP_ENV (development when unset)."""
    name = (app_env or os.environ.get("APP_ENV") or "development").lower()
    if name not in ENVIRONMENTS:
        raise RuntimeError(f"APP_ENV must be one of {', '.join(ENVIRONMENTS)}, not {name!r}")
    return ENVIRONMENTS[name]
