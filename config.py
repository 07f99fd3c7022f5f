"""Every setting in one table, resolved in one place: overrides > environment > instance/settings.py
> profile.

`APP_ENV`, from whichever of those gives it first, chooses the profile (development, testing,
production) whose defaults fill every setting nobody set. docs/configuration.md explains the order;
the README lists the table.
"""

import difflib
import hashlib
import math
import os
import re
import runpy
from copy import copy
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

BASE_DIR = Path(__file__).resolve().parent
INSTANCE_DIR = BASE_DIR / "instance"
SETTINGS_FILE = INSTANCE_DIR / "settings.py"
DEV_SECRET = "dev-secret-change-me"
PROFILES = ("development", "testing", "production")
TRUE_WORDS, FALSE_WORDS = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}
NEAR_MISS = 0.85
# The longest duration a setting may give: datetimes and timedeltas built from a longer one overflow
# (a PAYMENT_TTL of 10**23 seconds made every payment a 500), and no wait needs more.
MAX_SECONDS = 10 * 365 * 24 * 3600
SECONDS_BOUND = f"{MAX_SECONDS} seconds (10 years)"
# The most a count (proxies, attempts in flight) may be, and a retry schedule may be stretched.
MAX_COUNT = 1000
MAX_SCALE = 100
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
# The rate limits' stores besides Redis (gateway/accounts/rate_limit_store.py, `limits`' memory).
RATE_LIMIT_STORES = ("memory://", "gateway+db://")


class SettingsError(RuntimeError):
    """A setting that cannot be used: unknown name, or a value its parser refuses."""


# --- parsers: each takes a string (environment) or a Python value (settings.py) and returns the
# typed value -------


def text(value):
    """Any text, kept as given."""
    return str(value)


def optional_text(value):
    """Text, or None when empty."""
    return str(value).strip() or None if value is not None else None


def origin(value):
    """An http(s) origin without a trailing slash."""
    value = str(value).strip().rstrip("/")
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value


def boolean(value):
    """true/false, yes/no, on/off, 1/0."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in TRUE_WORDS | FALSE_WORDS:
        return word in TRUE_WORDS
    raise ValueError("must be true or false")


def whole_number(minimum, maximum=MAX_COUNT, bound=None):
    """A parser of whole numbers from `minimum` to `maximum` (`bound`: how its error states the
    maximum)."""

    def parse(value):
        if isinstance(value, bool) or not re.fullmatch(r"\s*-?\d+\s*", str(value)):
            raise ValueError("must be a whole number")
        try:
            number = int(value)
        except ValueError:  # more digits than int() reads: beyond any bound
            number = -math.inf if "-" in str(value) else math.inf
        if number < minimum:
            raise ValueError(f"must be at least {minimum}")
        if number > maximum:
            raise ValueError(f"must be at most {bound or maximum}")
        return number

    parse.__doc__ = f"A whole number from {minimum} to {bound or maximum}."
    return parse


def whole_seconds(minimum):
    """A parser of whole seconds from `minimum` to MAX_SECONDS (ten years)."""
    return whole_number(minimum, MAX_SECONDS, SECONDS_BOUND)


def positive_number(meaning, unit, maximum, bound):
    """A parser of positive numbers (fractions allowed) up to `maximum`: `meaning` names what is
    wanted, `unit` follows "more than 0", `bound` states the maximum. inf, nan and a number too
    large for a float are refused."""

    def parse(value):
        try:
            number = float(value)
        except OverflowError:  # an int too large for a float: past any maximum
            number = math.inf
        except (TypeError, ValueError):
            raise ValueError(f"must be {meaning}") from None
        if math.isnan(number):
            raise ValueError(f"must be {meaning}")
        if not number > 0:
            raise ValueError(f"must be more than 0{unit}")
        if number > maximum:  # inf too
            raise ValueError(f"must be at most {bound}")
        return number

    parse.__doc__ = f"A positive number, at most {bound}."
    return parse


# Seconds, e.g. a timeout; a factor stretching a retry schedule.
seconds = positive_number("a number of seconds", " seconds", MAX_SECONDS, SECONDS_BOUND)
scale = positive_number("a number such as 1 or 0.02", "", MAX_SCALE, MAX_SCALE)


def amount(value):
    """A positive decimal amount, kept as text so no float ever touches it."""
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError("must be a decimal amount such as 1000000.00") from None
    if not number.is_finite() or number <= 0:
        raise ValueError("must be a positive amount")
    return str(value).strip()


def rate_limit(value):
    """A rate of the `limits` library such as 10/minute."""
    from limits import parse

    try:
        parse(str(value))
    except ValueError:
        raise ValueError("must be a rate such as 10/minute or 100/second") from None
    return str(value)


def redis_url_problem(url, schemes):
    """Why `url` is no Redis URL of one of `schemes` that redis-py can use, or None."""
    from redis.connection import parse_url

    if not url.startswith(schemes):
        return "its scheme"
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - urlsplit reads the port only when asked
        parse_url(url)  # a query value redis-py refuses, e.g. ?socket_timeout=soon
    except ValueError:
        return "its port or query"
    if parts.scheme == "unix":
        return None if parts.path else "the socket's path"
    database = parts.path.strip("/")
    # redis-py would quietly use database 0 for /zero.
    return None if database.isdigit() or not database else "its database number"


def redis_url(value):
    """A Redis URL: redis://host:port/db, rediss:// (TLS) or unix:///path/to.sock; None when
    empty."""
    url = optional_text(value)
    problem = url and redis_url_problem(url, REDIS_SCHEMES)
    if problem:
        raise ValueError(
            f"must be a Redis URL such as redis://127.0.0.1:6379/0, rediss://… or "
            f"unix:///run/redis/redis.sock (check {problem})"
        )
    return url


def rate_limit_storage(value):
    """Where rate limits count: memory://, gateway+db:// (the database), or Redis by a redis:// or
    rediss:// URL (the database its fallback); None when empty."""
    uri = optional_text(value)
    if uri is None or uri.startswith(RATE_LIMIT_STORES):
        return uri
    redis = uri.removeprefix("gateway+")  # the store's own name for a Redis with the fallback
    problem = redis_url_problem(redis, ("redis://", "rediss://"))
    if problem:
        raise ValueError(
            "must be memory://, gateway+db:// (the database) or a Redis URL such as "
            f"redis://127.0.0.1:6379/0 or rediss://… (check {problem})"
        )
    return uri


def secrets_list(value):
    """Secrets separated by commas or spaces (environment), or a list (settings.py)."""
    items = value if isinstance(value, (list, tuple)) else re.split(r"[\s,]+", str(value))
    return [str(item) for item in items if str(item)]


def timezone(value):
    """An IANA time zone such as Asia/Dhaka."""
    try:
        ZoneInfo(str(value))
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("must be an IANA time zone such as Asia/Dhaka") from None
    return str(value)


def password_hash_method(value):
    """A werkzeug hash method: scrypt[:n:r:p] or pbkdf2[:hash[:iterations]]."""
    name, *params = str(value).strip().split(":")
    numbers = params[1:] if name == "pbkdf2" else params
    if (
        name not in ("scrypt", "pbkdf2")
        or len(params) > (3 if name == "scrypt" else 2)
        or (name == "pbkdf2" and params and params[0] not in hashlib.algorithms_available)
        or not all(number.isdigit() and int(number) > 0 for number in numbers)
    ):
        raise ValueError("must be a werkzeug hash method such as scrypt or pbkdf2:sha256:600000")
    return str(value).strip()


def one_of(*choices, fold=str.lower):
    """A parser that accepts one of `choices`, whatever the case."""

    def parse(value):
        word = fold(str(value).strip())
        if word not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return word

    parse.__doc__ = f"One of {', '.join(choices)}."
    return parse


# --- the table
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One setting: its parser, default, per-profile defaults, and what it means (the README
    row)."""

    name: str
    parse: object
    default: object
    meaning: str
    profiles: dict = field(default_factory=dict)
    secret: bool = False

    def default_for(self, profile):
        """The default under a profile."""
        return self.profiles.get(profile, self.default)


S = Setting
SETTINGS = {
    s.name: s
    for s in (
        S(
            "APP_ENV",
            one_of(*PROFILES),
            "development",
            "the profile: `development`, `testing` or `production`",
        ),
        S(
            "SECRET_KEY",
            text,
            DEV_SECRET,
            "signs sessions, CSRF and device tokens and seals device keys; production "
            "refuses to start without a random one of ≥ 32 characters",
            {"testing": "testing-secret"},
            secret=True,
        ),
        S(
            "SECRET_KEY_FALLBACKS",
            secrets_list,
            [],
            "previous secret keys, still accepted (never used to sign) while "
            "you rotate `SECRET_KEY`; comma-separated",
            secret=True,
        ),
        S(
            "DATABASE_URL",
            optional_text,
            None,
            "e.g. `postgresql://user:pass@host/db` (psycopg 3); unset: SQLite file "
            "`instance/gateway.sqlite3`",
            secret=True,
        ),
        S(
            "TEST_DATABASE_URL",
            optional_text,
            None,
            "the `testing` profile's database; unset: in-memory SQLite",
            secret=True,
        ),
        S(
            "REDIS_URL",
            redis_url,
            None,
            "e.g. `redis://127.0.0.1:6379/0`, `rediss://…` (TLS) or `unix:///…/redis.sock` "
            "(then set `RATELIMIT_STORAGE_URI` too): RQ jobs and shared rate limits; unset: "
            "jobs run in-process",
            secret=True,
        ),
        S(
            "BASE_URL",
            origin,
            "http://127.0.0.1:5000",
            "the public origin, used in `checkout_url` and the pairing QR",
        ),
        S("API_KEY_PREFIX", text, "gw_live_", "prefix of generated API keys"),
        S(
            "PAYMENT_TTL",
            whole_seconds(1),
            30 * 60,
            "seconds a payment stays open before it expires",
        ),
        S("MAX_AMOUNT", amount, "1000000.00", "the largest amount a payment may ask for"),
        S(
            "ALLOW_PRIVATE_CALLBACKS",
            boolean,
            True,
            "allow callback URLs on private/loopback addresses",
            {"production": False},
        ),
        S(
            "SESSION_COOKIE_SECURE",
            boolean,
            False,
            "send the panel's cookies over https only",
            {"production": True},
        ),
        S(
            "COMPANION_APP_URL",
            optional_text,
            None,
            "where shop owners download the companion app (http/https); shown on the pairing page",
        ),
        S(
            "SMS_PROVIDER_URL",
            optional_text,
            None,
            "an HTTP SMS provider for outbound SMS (unset: the paired phone sends them)",
            secret=True,
        ),
        S("SMS_PROVIDER_TIMEOUT", seconds, 10, "seconds the SMS provider has to answer in full"),
        S("WEBHOOK_CONNECT_TIMEOUT", seconds, 5, "seconds to connect to a webhook receiver"),
        S("WEBHOOK_TIMEOUT", seconds, 10, "seconds a webhook receiver has to answer in full"),
        S(
            "WALLET_HTTP_TIMEOUT",
            seconds,
            30,
            "seconds a wallet's merchant API (bKash, Nagad) has to answer a call",
        ),
        S(
            "WEBHOOK_LEASE_SECONDS",
            whole_seconds(1),
            60,
            "how long a worker's claim on a delivery lasts before another may take it over",
        ),
        S(
            "WEBHOOK_SECRET_OVERLAP",
            whole_seconds(0),
            24 * 3600,
            "seconds a rotated-out webhook secret still signs (`X-Service-Signature-Previous`)",
        ),
        S(
            "IDEMPOTENCY_LEASE_SECONDS",
            seconds,
            5,
            "seconds after which an `Idempotency-Key` still in progress "
            "belongs to a request that died: a retry takes it over (SQLite; "
            "PostgreSQL holds the key with a transaction lock)",
        ),
        S(
            "WEBHOOK_RETRY_SCALE",
            scale,
            1,
            "multiplies the webhook retry schedule (1 min … 24 h), at most 100; lower it only "
            "for tests or staging (the fault suite uses 0.02)",
        ),
        S(
            "WEBHOOK_SLOW_HOST_CONCURRENCY",
            whole_number(1),
            1,
            "attempts in flight at once to a receiving host that has "
            "not answered quickly of late (RQ only); its other deliveries wait",
        ),
        S(
            "WEBHOOK_SLOW_SECONDS",
            seconds,
            5,
            "an answer slower than this (or none yet) makes a host slow for the cap "
            "above; a receiver that always takes longer gets one attempt at a time, so "
            "raise the cap for it",
        ),
        S(
            "WEBHOOK_SLOW_BRAND_CONCURRENCY",
            whole_number(1),
            2,
            "attempts in flight at once, per brand, to receiving hosts that have not answered "
            "quickly of late (RQ only): one brand's slow receivers cannot hold every worker",
        ),
        S(
            "TELEGRAM_API_BASE",
            origin,
            "https://api.telegram.org",
            "where merchant notifications reach Telegram's Bot API (sendMessage)",
        ),
        S(
            "NOTIFICATION_RETRY_SCALE",
            scale,
            1,
            "multiplies the merchant notifications' retry schedule (1 min … 6 h), at most 100; "
            "lower it only for tests or staging",
        ),
        S(
            "SWEEP_INTERVAL",
            whole_seconds(1),
            15,
            "seconds between outbox sweeps (due webhooks and SMS re-enqueued)",
        ),
        S(
            "JOBS_IN_PROCESS",
            boolean,
            True,
            "without Redis, run jobs in a thread of the web process",
            {"testing": False},
        ),
        S(
            "API_RATE_LIMIT",
            rate_limit,
            "100/second",
            "per API key (counted per web process when REDIS_URL is unset)",
        ),
        S(
            "API_AUTH_FAILURE_LIMIT",
            rate_limit,
            "30/minute",
            "requests with an unknown or revoked API key, per client address",
        ),
        S(
            "CHECKOUT_CLAIM_RATE_LIMIT",
            rate_limit,
            "10/hour",
            "TrxID attempts per payment at checkout (typos caught by the form do not count)",
        ),
        S(
            "RATELIMIT_STORAGE_URI",
            rate_limit_storage,
            None,
            "where limits count: unset is `REDIS_URL` with the database "
            "as fallback, or the database alone; a `redis://` or `rediss://` URL is that Redis "
            "with the database as fallback, `gateway+db://` the database alone; `memory://` "
            "makes each process count for itself",
            secret=True,
        ),
        S(
            "LOGIN_RATE_LIMIT",
            rate_limit,
            "10/minute",
            "failed panel sign-ins per address, and per e-mail (each counted apart)",
        ),
        S(
            "TWO_FACTOR_RATE_LIMIT",
            rate_limit,
            "10/minute;30/hour;100/day",
            "wrong two-factor codes per user (only someone with the password reaches that step); "
            "the hour and day caps keep a six-digit code out of reach of patient guessing",
        ),
        S(
            "RATELIMIT_ENABLED",
            boolean,
            True,
            "`false` switches every rate limit off",
            {"testing": False},
        ),
        S(
            "TRUSTED_PROXIES",
            whole_number(0),
            0,
            "how many reverse proxies stand in front of the app (1 behind nginx): "
            "client address and scheme then come from `X-Forwarded-For`/`-Proto`. Set the "
            "exact count; a higher one lets "  # noqa: E501
            "clients fake their address",
        ),
        S(
            "DOCTOR_HEARTBEAT_MAX_AGE",
            whole_seconds(1),
            1800,
            "`flask gateway doctor` reports a paired phone silent "
            "for longer than this many seconds",
        ),
        S(
            "DEFAULT_TIMEZONE",
            timezone,
            "Asia/Dhaka",
            "the zone times are shown in when a brand names none",
        ),
        S(
            "PASSWORD_HASH_METHOD",
            password_hash_method,
            "scrypt",
            "how panel passwords are hashed (werkzeug's "
            "`generate_password_hash` method); the testing profile's is cheap",
            {"testing": "pbkdf2:sha256:1"},
        ),
        S(
            "LOG_LEVEL",
            one_of("DEBUG", "INFO", "WARNING", "ERROR", fold=str.upper),
            "INFO",
            "the least severe log level written (to stderr)",
        ),
    )
}

# Fixed for every profile: extensions' wiring, not operator choices.
FIXED = {
    "MAX_CONTENT_LENGTH": 1024 * 1024,
    # The one route that takes more (a manual payment's proof, 5 MB, plus the form around it):
    # gateway/request_limits.py.
    "PROOF_UPLOAD_MAX_LENGTH": 5 * 1024 * 1024 + 64 * 1024,
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "REMEMBER_COOKIE_HTTPONLY": True,
    "BABEL_DEFAULT_LOCALE": "en",
    "BABEL_DEFAULT_TIMEZONE": "UTC",
    "API_TITLE": "Payment Gateway API",
    "API_VERSION": "1.0.0",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/api/v1",
    "OPENAPI_JSON_PATH": "openapi.json",
}
PROFILE_FIXED = {"testing": {"TESTING": True}}
# Flask's and its extensions' own names that instance/settings.py may also set
# (docs/configuration.md).
FRAMEWORK_NAMES = {
    "SQLALCHEMY_DATABASE_URI",
    "SQLALCHEMY_ENGINE_OPTIONS",
    "SQLALCHEMY_ECHO",
    "WTF_CSRF_ENABLED",
    "WTF_CSRF_TIME_LIMIT",
    "SERVER_NAME",
    "PREFERRED_URL_SCHEME",
    "PERMANENT_SESSION_LIFETIME",
    "SESSION_COOKIE_NAME",
    "SESSION_COOKIE_DOMAIN",
    "PROPAGATE_EXCEPTIONS",
    "DEBUG",
    "TESTING",
} | set(FIXED)


def suggestion(name, known):
    """' (did you mean X?)' for the closest known name, or ''."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def read_settings_file(path):
    """The upper-case names instance/settings.py defines; unknown ones refused with a suggestion."""
    path = Path(path)
    if not path.is_file():
        return {}
    values = {name: value for name, value in runpy.run_path(str(path)).items() if name.isupper()}
    unknown = sorted(set(values) - set(SETTINGS) - FRAMEWORK_NAMES)
    if unknown:
        known = set(SETTINGS) | FRAMEWORK_NAMES
        listed = "; ".join(f"{name}{suggestion(name, known)}" for name in unknown)
        raise SettingsError(
            f"{path} sets unknown settings: {listed}. The README's Configuration table lists them."
        )
    return values


def near_misses(environ):
    """Environment variables that look like a misspelt setting name: [(given, meant)]."""
    found = []
    for name in environ:
        if name in SETTINGS or not name.isupper():
            continue
        close = difflib.get_close_matches(name, list(SETTINGS), n=1, cutoff=NEAR_MISS)
        if close:
            found.append((name, close[0]))
    return sorted(found)


def parse_value(setting, value, source):
    """The typed value, or a SettingsError naming the setting and where it came from."""
    try:
        return setting.parse(value)
    except ValueError as error:
        shown = "" if setting.secret else f", not {str(value)!r}"
        raise SettingsError(f"{setting.name} {error}{shown} (from {source})") from None


def resolve(name, overrides, environ, file_values, profile):
    """One setting's typed value from the first source that gives it."""
    setting = SETTINGS[name]
    default = setting.default_for(profile)
    for source, values in (
        ("create_app", overrides),
        ("the environment", environ),
        ("instance/settings.py", file_values),
    ):
        if name in values:
            # None (REDIS_URL=None in a test's overrides) means the default, not "ask the next
            # source".
            return (
                parse_value(setting, values[name], source)
                if values[name] is not None
                else copy(default)
            )
    return copy(default)


def database_uri(url):
    """A database URL normalised to the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def derived(values, profile):
    """Flask and extension settings that follow from the table (the database URI, secure remember
    cookies…).
    """
    if profile == "testing":
        url = values["TEST_DATABASE_URL"] or "sqlite://"
    else:
        url = values["DATABASE_URL"] or f"sqlite:///{INSTANCE_DIR / 'gateway.sqlite3'}"
    uri = database_uri(url)
    return {
        "SQLALCHEMY_DATABASE_URI": uri,
        # No pool_pre_ping: gateway.ping_after_idle pings only a connection that sat idle.
        "SQLALCHEMY_ENGINE_OPTIONS": {},
        "REMEMBER_COOKIE_SECURE": values["SESSION_COOKIE_SECURE"],
        # Flask-WTF signs CSRF tokens with itsdangerous, which verifies with any key of a list,
        # signs with the last.
        "WTF_CSRF_SECRET_KEY": [*values["SECRET_KEY_FALLBACKS"], values["SECRET_KEY"]],
    }


def check_together(values):
    """Refuse settings that each parse but cannot work together."""
    if (values["REDIS_URL"] or "").startswith("unix://") and not values["RATELIMIT_STORAGE_URI"]:
        # The rate limits' Redis store (with its database fallback) speaks redis:// and rediss://.
        raise SettingsError(
            "REDIS_URL is a unix:// socket, which the rate limits cannot count in: set "
            "RATELIMIT_STORAGE_URI too (gateway+db:// for the database, or a redis:// URL of a "
            "Redis over TCP)"
        )


def load_settings(overrides=None, environ=None, settings_file=None):
    """The whole configuration, and the near-miss environment names to warn about: (dict, [(given,
    meant)]).
    """
    overrides = dict(overrides or {})
    environ = os.environ if environ is None else environ
    file_values = read_settings_file(SETTINGS_FILE if settings_file is None else settings_file)
    profile = resolve("APP_ENV", overrides, environ, file_values, "development")
    values = {name: resolve(name, overrides, environ, file_values, profile) for name in SETTINGS}
    check_together(values)
    config = {**FIXED, **PROFILE_FIXED.get(profile, {}), **values, **derived(values, profile)}
    # Flask's own names from the file, then the caller's overrides of anything, win over what was
    # derived.
    config.update({name: value for name, value in file_values.items() if name not in SETTINGS})
    config.update({name: value for name, value in overrides.items() if name not in SETTINGS})
    return config, near_misses(environ)
