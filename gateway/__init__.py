"""The application factory: settings, extensions, blueprints, commands."""

import sqlite3
import time

from flask import Flask, jsonify
from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import Pool
from werkzeug.middleware.proxy_fix import ProxyFix

from config import DEV_SECRET, INSTANCE_DIR, load_settings

from . import db_models, jobs  # noqa: F401 - db_models: every table known to db.metadata
from .accounts import rate_limit_store
from .cookie_session import CookieSessionInterface
from .errors import register_error_handlers
from .extensions import babel, csrf, db, login_manager, migrate
from .i18n import init_i18n
from .jobs.redis_health import redis_state
from .request_limits import guard_path_arguments, limit_chunked_bodies
from .request_log import configure_logging, register_request_log
from .security_headers import register_security_headers
from .states import register_template_helpers


def create_app(overrides=None, settings_file=None):
    """Build a configured application; `overrides` wins over the environment and
    instance/settings.py (tests).
    """
    app = Flask(
        __name__,
        instance_path=str(INSTANCE_DIR),
        template_folder="../templates",
        static_folder="../static",
    )
    settings, near_misses = load_settings(overrides, settings_file=settings_file)
    app.config.from_mapping(settings)
    check_production_secrets(app)
    app.json.sort_keys = False
    app.session_interface = CookieSessionInterface()
    configure_logging(app)
    for given, meant in near_misses:
        app.logger.warning(
            "environment variable %s is not a setting; did you mean %s?", given, meant
        )
    trust_proxies(app)
    limit_chunked_bodies(app)

    register_extensions(app)
    register_error_handlers(app)
    register_request_log(app)
    register_security_headers(app)
    register_blueprints(app)
    register_commands(app)
    register_template_helpers(app)
    connect_listeners()
    return app


def connect_listeners():
    """Every domain that acts on another's announcement, wired here so neither imports the other.

    A payment completing queues its receipt SMS, tells the merchant, settles its payment link and
    marks its invoice paid; a payment cancelled releases the SMS it held for review; one ending
    unpaid gives its link's slot back; an event of a plugin payment also writes its dialect's IPN,
    sent with the key header the plugin expects. Each runs in the announcing transaction (see
    gateway/payments/signals.py and gateway/webhooks/signals.py).
    """
    from .compat.ipn import ipn_headers, write_ipns
    from .invoices.lifecycle import mark_invoices_paid
    from .links.paying import link_payment_closed, link_payments_completed
    from .notifications.events import notify_payments_completed
    from .payments import signals as payments
    from .sms.outbound import queue_receipts
    from .sms.review import release_held_sms
    from .wallets.refunds import record_wallet_refund, send_through_wallet
    from .webhooks import signals as webhooks

    # A batch of completions (a phone's, or a list of one) goes to each listener whole, in this
    # order: every effect written once, in a fixed order, in the completing transaction.
    payments.payments_completed.connect(queue_receipts, weak=False)
    payments.payments_completed.connect(notify_payments_completed, weak=False)
    payments.payments_completed.connect(link_payments_completed, weak=False)
    payments.payments_completed.connect(mark_invoices_paid, weak=False)
    payments.payment_closed.connect(link_payment_closed, weak=False)
    payments.payment_cancelled.connect(release_held_sms, weak=False)
    payments.refund_sending.connect(send_through_wallet, weak=False)
    payments.refund_recording.connect(record_wallet_refund, weak=False)
    webhooks.events_emitted.connect(write_ipns, weak=False)
    webhooks.delivery_headers.connect(ipn_headers, weak=False)


def check_production_secrets(app):
    """Refuse to start production with a missing, development or short secret (a fallback too)."""
    if app.config["APP_ENV"] != "production":
        return
    for secret in (app.config.get("SECRET_KEY"), *app.config.get("SECRET_KEY_FALLBACKS", [])):
        if not secret or secret == DEV_SECRET or len(secret) < 32:
            raise RuntimeError(
                "SECRET_KEY (and each of SECRET_KEY_FALLBACKS) must be a random value of at least "
                "32 characters in production."
            )


def trust_proxies(app):
    """Behind TRUSTED_PROXIES reverse proxies, take the client's address and scheme from
    X-Forwarded-For/-Proto.

    The audit log and the sign-in rate limit then see the client, not the proxy; with 0 the headers
    are ignored. X-Forwarded-Host is not trusted: many proxies pass a client's own value through
    untouched.
    """
    hops = int(app.config.get("TRUSTED_PROXIES") or 0)
    if hops > 0:
        app.wsgi_app = ProxyFix(
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=0, x_port=0, x_prefix=0
        )


def register_extensions(app):
    """Bind each extension to this application."""
    db.init_app(app)
    migrate.init_app(app, db, directory=str(app.root_path + "/../migrations"))
    csrf.init_app(app)
    rate_limit_store.init_app(app)
    babel.init_app(app)
    init_i18n(app)
    login_manager.init_app(app)
    jobs.init_app(app)

    @login_manager.user_loader
    def load_user(user_id):
        """The signed-in panel user, or None when deactivated, gone, or the password changed since
        sign-in.
        """
        from .accounts.models.user import User

        return User.from_session_id(user_id)


def register_blueprints(app):
    """The REST API, the health check, and the pages."""
    from .api import register_api

    register_api(app)
    merchant_api = set(app.blueprints)  # its resources check their own path arguments
    from .checkout import register_checkout

    register_checkout(app)
    from .panel import register_panel

    register_panel(app)
    from .mobile import register_mobile

    register_mobile(app)
    from .compat import register_compat

    register_compat(app)
    guard_path_arguments(app, [name for name in app.blueprints if name not in merchant_api])

    @app.get("/healthz")
    def healthz():
        """Liveness for load balancers: 503 without the database; Redis unreachable is only
        `degraded` (200).
        """
        try:
            db.session.execute(text("SELECT 1"))
        except Exception:  # noqa: BLE001 - any database failure means unhealthy
            db.session.rollback()
            return jsonify(status="unavailable", database="unreachable"), 503
        redis = redis_state(app)
        return jsonify(
            status="degraded" if redis == "degraded" else "ok", database="ok", redis=redis
        )


def register_commands(app):
    """The `flask gateway …` operator commands."""
    from .cli import gateway_cli

    app.cli.add_command(gateway_cli())


@event.listens_for(Engine, "connect")
def tune_sqlite(dbapi_connection, connection_record):
    """WAL and a busy timeout let SQLite serve concurrent requests; foreign keys are enforced.

    Python's sqlite3 opens a transaction just before a connection's first INSERT, UPDATE or DELETE
    (reads before it run outside one); IMMEDIATE makes that BEGIN take the write lock at once, so a
    writer that finds it taken waits in SQLite's busy handler (up to busy_timeout) and never fails
    half-way through upgrading a read to a write.
    """
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.isolation_level = "IMMEDIATE"
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


# A PostgreSQL connection back in the pool for longer than this is pinged before it is lent again.
PING_AFTER_IDLE_SECONDS = 1.0


@event.listens_for(Pool, "checkin")
def note_idle_since(dbapi_connection, connection_record):
    """Remember when a connection went back to the pool (ping_after_idle reads it)."""
    connection_record.info["idle_since"] = time.monotonic()


@event.listens_for(Pool, "checkout")
def ping_after_idle(dbapi_connection, connection_record, connection_proxy):
    """Ping a PostgreSQL connection that sat idle for more than PING_AFTER_IDLE_SECONDS; one that
    fails is replaced, and the pool's older connections with it.

    SQLAlchemy's pool_pre_ping pings at every checkout: a round trip before each request's own, the
    half of a read's. A database restart or a terminated backend happens while connections sit
    idle, which is what this catches; a connection lent again within a second was alive a second
    ago. A fault in that second fails only the request that meets it. SQLite files do not go
    stale.
    """
    idle_since = connection_record.info.get("idle_since")
    if isinstance(dbapi_connection, sqlite3.Connection) or idle_since is None:
        return
    if time.monotonic() - idle_since < PING_AFTER_IDLE_SECONDS:
        return
    try:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        dbapi_connection.rollback()
    except Exception as error:  # noqa: BLE001 - any failure of the ping means a dead connection
        stale = DisconnectionError(f"idle connection failed its ping: {error}")
        stale.invalidate_pool = True
        raise stale from error
