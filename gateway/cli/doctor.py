"""`flask gateway doctor`'s checks: each looks at one part of a deployment and says what is wrong
and how to fix it.
"""

import logging
import os
import shlex
import sqlite3
from collections import namedtuple
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from flask import current_app
from sqlalchemy import text
from sqlalchemy.engine import make_url

from ..accounts.models.brand import Brand
from ..clock import utcnow
from ..devices.brand_devices import brand_phones
from ..devices.models.device import SMS_TO_URL_APP, Device
from ..extensions import db
from ..payments.methods import PROVIDER_NAMES
from ..states import OUTBOX_FAILED, OUTBOX_PENDING
from ..webhooks.models.webhook import WebhookDelivery
from .backup import sqlite_file

# A problem makes doctor exit non-zero; a note is worth knowing but fine.
Finding = namedtuple("Finding", "severity message fix")
PROBLEM, NOTE = "problem", "note"

KNOWN_SECRETS = {
    "dev-secret-change-me",
    "testing-secret",
    "change-me",
    "changeme",
    "secret",
    "secret-key",
    "your-secret-key",
    "please-change-me",
}
MIN_SECRET_LENGTH = 32
MIN_SECRET_SYMBOLS = 12  # distinct characters: "aaaa…" or "abab…" of any length is no secret
NEW_SECRET = "python3 -c 'import secrets; print(secrets.token_urlsafe(48))'"
# A delivery this late past its due time is not being worked on: the workers (or the in-process
# runner) are not.
DELIVERY_OVERDUE = timedelta(minutes=10)
RETRYING_PILE = 10
FAILED_WINDOW = timedelta(hours=24)
# The README's deployment (deploy/): the file deploy/gateway-flask and the units read unless
# GATEWAY_ENV names another, the units' User=, and their names (gateway-worker@.service is a
# template: its instances are gateway-worker@1, @2, …).
ENV_FILE = "/etc/gateway/gateway.env"
SERVICE_USER = "gateway"
RESTART = "systemctl restart gateway-web 'gateway-worker@*'"
START_WORKER = "systemctl enable --now gateway-worker@1"


def problem(message, fix):
    """A finding that fails the check."""
    return Finding(PROBLEM, message, fix)


def note(message, fix=None):
    """A finding worth reading that fails nothing."""
    return Finding(NOTE, message, fix)


def production():
    """Whether this is a production deployment (some checks apply only there)."""
    return current_app.config["APP_ENV"] == "production"


def env_file():
    """The environment file the services read: the one deploy/gateway-flask was given, or its
    default."""
    return os.environ.get("GATEWAY_ENV") or ENV_FILE


def deployed():
    """Whether this runs as the README's deployment: production, or through deploy/gateway-flask."""
    return production() or "GATEWAY_ENV" in os.environ


def flask_command(args):
    """`flask <args>` as typed here: on a deployment deploy/gateway-flask as the services' user
    (a bare `flask` reads no environment file, so another database), else the checkout's venv.
    """
    if not deployed():
        return f".venv/bin/flask {args}"
    root = Path(current_app.root_path).parent
    given = os.environ.get("GATEWAY_ENV")
    chosen = f"GATEWAY_ENV={shlex.quote(given)} " if given and given != ENV_FILE else ""
    wrapper = shlex.quote(str(root / "deploy" / "gateway-flask"))
    return f"sudo -u {SERVICE_USER} {chosen}{wrapper} {args}"


def set_setting(setting):
    """Where to change a setting, and the restart that makes the services read it."""
    if not deployed():
        return f"set {setting} in instance/settings.py or the environment, and restart the app"
    return f"set {setting} in {env_file()} and restart the services: `{RESTART}`"


def sentence(text):
    """A clause as the start of a sentence (str.capitalize would lower the rest)."""
    return text[:1].upper() + text[1:]


def start_worker():
    """How to start a worker of the gateway (RQ's scheduler included): its unit on a deployment."""
    if not deployed():
        return f"run `{flask_command('gateway worker')}` and keep it running"
    return (
        f"start one: `{START_WORKER}` (deploy/systemd/gateway-worker@.service); without systemd, "
        f"keep `{flask_command('gateway worker')}` running (docs/deployment.md, section 5)"
    )


def safe_database_url():
    """The database URL without its password, to name it in a finding."""
    return make_url(current_app.config["SQLALCHEMY_DATABASE_URI"]).render_as_string(
        hide_password=True
    )


def check_demo_numbers():
    """An enabled demo receiving number: customers would pay a number no merchant here owns."""
    from ..payments.models.payment_method import PaymentMethod

    rows = db.session.execute(
        db.select(PaymentMethod, Brand.name)
        .join(Brand, Brand.id == PaymentMethod.brand_id)
        .where(PaymentMethod.is_demo.is_(True), PaymentMethod.enabled.is_(True))
        .order_by(PaymentMethod.id)
    ).all()
    return [
        problem(
            f"{PROVIDER_NAMES[method.provider]} {method.number} (#{method.id}, {brand}) is "
            "a demo number and switched on: money customers send there never reaches you.",
            "Add your own number (`"
            + flask_command(f"gateway add-method --provider {method.provider} --number 01XXXXXXXXX")
            + "`, your number in place of 01XXXXXXXXX), then switch the demo one off: `"
            + flask_command(f"gateway update-method {method.id} --disable")
            + "`.",
        )
        for method, brand in rows
    ]


def check_secret_key():
    """A missing, default, short or low-variety SECRET_KEY (sessions, device tokens and keys derive
    from it).
    """
    secret = current_app.config.get("SECRET_KEY") or ""
    if secret.lower() in KNOWN_SECRETS:
        reason = "is a published default"
    elif len(secret) < MIN_SECRET_LENGTH:
        reason = f"has {len(secret)} characters, fewer than {MIN_SECRET_LENGTH}"
    elif len(set(secret)) < MIN_SECRET_SYMBOLS:
        reason = f"repeats a few characters ({len(set(secret))} different ones)"
    else:
        return []
    return [
        problem(
            f"SECRET_KEY {reason}: anyone who guesses it can forge panel sessions and "
            "device tokens.",
            f"Make a new key with `{NEW_SECRET}`, "
            + set_setting("SECRET_KEY to it")
            + " (phones must be paired again unless the old key stays in SECRET_KEY_FALLBACKS "
            "during the switch: docs/configuration.md).",
        )
    ]


def check_base_url():
    """In production, checkout links and the phone's server address must be https."""
    if not production():
        return []
    findings = []
    origins = [("BASE_URL", current_app.config["BASE_URL"])]
    origins += [
        (f"{name}'s origin (panel Settings)", url)
        for name, url in db.session.execute(
            db.select(Brand.name, Brand.base_url).where(Brand.base_url.is_not(None))
        ).all()
    ]
    for label, url in origins:
        if urlsplit(url).scheme != "https":
            findings.append(
                problem(
                    f"{label} is {url}: customers would pay and phones would send SMS over plain "
                    "http.",
                    "Serve the gateway behind TLS (docs/deployment.md, section 6), then "
                    + (
                        "set the origin in the panel's Settings to https://your.domain"
                        if label != "BASE_URL"
                        else set_setting("BASE_URL=https://your.domain")
                    )
                    + ".",
                )
            )
    return findings


def check_proxies():
    """In production an https BASE_URL means a TLS proxy in front, which TRUSTED_PROXIES must count.

    gunicorn here speaks plain http, so https comes from a reverse proxy. With TRUSTED_PROXIES=0 the
    app takes the proxy for the client: every customer shares one rate-limit bucket and one address
    in the audit log, and the request looks like http. More than 2 hops is unusual enough to be a
    miscount that lets clients forge X-Forwarded-For.
    """
    if not production():
        return []
    hops = int(current_app.config.get("TRUSTED_PROXIES") or 0)
    https = urlsplit(current_app.config["BASE_URL"]).scheme == "https"
    if https and hops == 0:
        return [
            problem(
                "BASE_URL is https but TRUSTED_PROXIES=0: behind the TLS proxy every "
                "client looks like the "
                "proxy (one shared rate limit, the proxy's address in the audit log, http "
                "as the scheme).",
                "With the proxy setting X-Forwarded-For and X-Forwarded-Proto (deploy/nginx does), "
                + set_setting("TRUSTED_PROXIES=1")
                + " (the number of proxies in front of gunicorn: 1 for nginx alone).",
            )
        ]
    if hops > 2:
        return [
            problem(
                f"TRUSTED_PROXIES={hops}: one more than the real count lets any client "
                "forge its address.",
                sentence(set_setting("TRUSTED_PROXIES=1"))
                + " (the exact number of reverse proxies in front of gunicorn: 1 for nginx alone).",
            )
        ]
    return []


def check_database():
    """The database answers."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as error:  # noqa: BLE001 - any failure to connect is the finding
        db.session.rollback()
        path = sqlite_file(current_app.config["SQLALCHEMY_DATABASE_URI"])
        if path is not None:
            return [sqlite_unusable(path, error)]
        return [
            problem(
                f"The database {safe_database_url()} is unreachable ({error.__class__.__name__}).",
                "Start it (`systemctl start postgresql`), or check the host, port, user, password "
                "and database name: " + set_setting("DATABASE_URL right") + ".",
            )
        ]
    return []


def sqlite_unusable(path, error):
    """The finding for a SQLite file the gateway cannot open: its folder, its permissions, or the
    file itself."""
    owner = f"the gateway's user ({SERVICE_USER})" if deployed() else "the user running the gateway"
    folder = path.parent
    if not folder.is_dir():
        fix = f"Create the folder {folder}, writable by {owner}, or "
    elif isinstance(getattr(error, "orig", None), sqlite3.DatabaseError) and not isinstance(
        error.orig, sqlite3.OperationalError
    ):
        fix = (
            f"{path} is not a SQLite database (damaged, or another file): restore it from a backup "
            "(docs/deployment.md, section 9), or "
        )
    else:
        fix = (
            f"The file {path} and its folder {folder} must exist and be readable and writable by "
            f"{owner} (SQLite writes its journal beside the file); or "
        )
    return problem(
        f"The SQLite database {path} cannot be opened ({error.__class__.__name__}).",
        fix + set_setting("DATABASE_URL to the right file") + ".",
    )


def check_migrations():
    """The database's Alembic revision is the code's head: `flask db upgrade` has run after the last
    update.
    """
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory

    heads = set(ScriptDirectory(current_app.extensions["migrate"].directory).get_heads())
    alembic_log = logging.getLogger("alembic")
    level = alembic_log.level
    alembic_log.setLevel(logging.WARNING)  # not its "Context impl" lines between doctor's own
    try:
        with db.engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
    finally:
        alembic_log.setLevel(level)
    if current == heads:
        return []
    shown = ", ".join(sorted(current)) or "none (not created by the migrations)"
    return [
        problem(
            f"The database schema is at revision {shown}; this code expects "
            f"{', '.join(sorted(heads))}.",
            "Stop the workers (`systemctl stop 'gateway-worker@*'`), upgrade the schema (`"
            + flask_command("db upgrade")
            + "`), then restart the web process and the workers (`systemctl restart gateway-web "
            "gateway-worker@1`, and each other gateway-worker@N you run; docs/deployment.md, "
            "section 10)."
            if deployed()
            else f"Stop the app and its workers, run `{flask_command('db upgrade')}`, then start "
            "them again.",
        )
    ]


def redis_connection():
    """A Redis client for REDIS_URL with short timeouts, or None without REDIS_URL."""
    url = current_app.config.get("REDIS_URL")
    if not url:
        return None
    from redis import Redis

    return Redis.from_url(url, socket_connect_timeout=2, socket_timeout=3)


def redis_address():
    """host:port/db of REDIS_URL, or its socket's path, without a password."""
    parts = urlsplit(current_app.config["REDIS_URL"])
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname}:{parts.port or 6379}{parts.path}"


def check_redis():
    """Redis answers when REDIS_URL is set; without it in production, a note that the web process
    runs the jobs.
    """
    connection = redis_connection()
    if connection is None:
        if production():
            return [
                note(
                    "REDIS_URL is not set: webhooks, SMS and expiry run inside the web process.",
                    "Fine on one machine; to move them out, "
                    + set_setting("REDIS_URL=redis://127.0.0.1:6379/0")
                    + f", then start a worker: `{START_WORKER}`.",
                )
            ]
        return []
    try:
        connection.ping()
    except Exception as error:  # noqa: BLE001 - any failure to reach Redis is the finding
        return [
            problem(
                f"Redis at {redis_address()} is unreachable ({error.__class__.__name__}), "
                "degraded: wake-ups wait for the sweep.",
                "Start Redis (`systemctl start redis-server`), or "
                + set_setting("REDIS_URL right")
                + ".",
            )
        ]
    finally:
        connection.close()
    return []


def check_workers():
    """With Redis, live RQ workers serve every queue and RQ's scheduler (retries at their time)
    runs.
    """
    from redis.exceptions import RedisError
    from rq import Worker
    from rq.scheduler import RQScheduler

    from ..jobs import QUEUES

    connection = redis_connection()
    if connection is None:
        return []
    try:
        served = {
            name for worker in Worker.all(connection=connection) for name in worker.queue_names()
        }
        unscheduled = [
            name for name in QUEUES if not connection.exists(RQScheduler.get_locking_key(name))
        ]
    except RedisError:
        return [note("skipped: Redis is unreachable")]
    finally:
        connection.close()
    findings = []
    unserved = [name for name in QUEUES if name not in served]
    if unserved:
        findings.append(
            problem(
                f"No RQ worker serves {', '.join(unserved)}: webhooks, SMS or sweeps are not run.",
                sentence(start_worker()) + ".",
            )
        )
    if unscheduled:
        findings.append(
            problem(
                f"RQ's scheduler holds no lock for {', '.join(unscheduled)}: retries due later "
                "are not woken at their time.",
                "Stop any bare rq worker: the gateway's own worker starts the scheduler; "
                + start_worker()
                + ".",
            )
        )
    return findings


def check_heartbeats(now=None):
    """A paired phone checked in recently: without one, no SMS arrives and no payment completes."""
    now = now or utcnow()
    limit = timedelta(seconds=int(current_app.config.get("DOCTOR_HEARTBEAT_MAX_AGE", 1800)))
    findings = []
    for brand in db.session.execute(db.select(Brand).order_by(Brand.id)).scalars():
        devices = (
            db.session.execute(db.select(Device).where(*brand_phones(brand.id))).scalars().all()
        )
        if not devices:
            findings.append(
                problem(
                    f"{brand.name} has no paired phone: no SMS arrives, so no payment completes.",
                    "Pair the companion app: panel → Devices, or "
                    f"`{flask_command('gateway pair-code --qr')}`.",
                )
            )
            continue
        beats = [heard_at for heard_at in map(last_heard, devices) if heard_at]
        if not beats or now - max(beats) > limit:
            since = f"since {max(beats):%Y-%m-%d %H:%M} UTC" if beats else "ever"
            findings.append(
                problem(
                    f"{brand.name}'s phone has not checked in {since} (limit "
                    f"{int(limit.total_seconds() // 60)} minutes): SMS may not be forwarded.",
                    "Open the companion app on the phone: check it is online, allowed to run in "
                    "the background, and still paired.",
                )
            )
    return findings


def last_heard(device):
    """When a phone last showed it is alive: its heartbeat, or for SMS to URL Forwarder (which sends
    none) its last text."""
    if device.app == SMS_TO_URL_APP:
        return device.last_sms_at
    return device.last_heartbeat_at


def check_webhooks(now=None):
    """Webhook deliveries that failed in the last 24 h, piled up retrying, or sit overdue with
    nobody sending.
    """
    now = now or utcnow()
    count = db.func.count(WebhookDelivery.id)
    failed = db.session.execute(
        db.select(count).where(
            WebhookDelivery.status == OUTBOX_FAILED,
            WebhookDelivery.updated_at >= now - FAILED_WINDOW,
        )
    ).scalar_one()
    retrying = db.session.execute(
        db.select(count).where(
            WebhookDelivery.status == OUTBOX_PENDING, WebhookDelivery.attempts > 0
        )
    ).scalar_one()
    overdue = db.session.execute(
        db.select(count).where(
            WebhookDelivery.status == OUTBOX_PENDING,
            WebhookDelivery.next_attempt_at <= now - DELIVERY_OVERDUE,
        )
    ).scalar_one()
    look = (
        "See panel → Developers → Deliveries for the receiver's answers; fix the receiver, "
        "then retry them there."
    )
    findings = []
    if failed:
        findings.append(
            problem(f"{failed} webhook deliveries failed for good in the last 24 hours.", look)
        )
    if retrying >= RETRYING_PILE:
        findings.append(
            problem(
                f"{retrying} webhook deliveries are retrying: the receiver keeps refusing them.",
                look,
            )
        )
    if overdue:
        findings.append(
            problem(
                f"{overdue} webhook deliveries are more than "
                f"{DELIVERY_OVERDUE.seconds // 60} minutes "
                "past due: nothing is sending them.",
                "With REDIS_URL the workers send them; "
                + start_worker()
                + "; without it the web process does"
                + (": check it runs (`systemctl status gateway-web`)." if deployed() else "."),
            )
        )
    return findings


# (title, check) in the order doctor runs them: the database first, since most checks read it.
CHECKS = (
    ("database reachable", check_database),
    ("migrations current", check_migrations),
    ("SECRET_KEY strong", check_secret_key),
    ("BASE_URL https", check_base_url),
    ("reverse proxies counted", check_proxies),
    ("no demo number enabled", check_demo_numbers),
    ("Redis reachable", check_redis),
    ("workers and scheduler alive", check_workers),
    ("phone checking in", check_heartbeats),
    ("webhooks delivered", check_webhooks),
)
NEEDS_DATABASE = {
    check_migrations,
    check_base_url,
    check_demo_numbers,
    check_heartbeats,
    check_webhooks,
}


def run_checks():
    """Every check's findings as [(title, findings)]; checks that read the database are skipped
    without one.
    """
    results = []
    database_up = True
    for title, check in CHECKS:
        if check in NEEDS_DATABASE and not database_up:
            results.append((title, [note("skipped: the database is unreachable")]))
            continue
        try:
            findings = check()
        except Exception as error:  # noqa: BLE001 - one broken check must not hide the others
            db.session.rollback()
            # The class alone: an error's text can carry a URL with its password.
            findings = [
                problem(
                    f"The check itself failed ({error.__class__.__name__}).",
                    f"Run `{flask_command('gateway doctor')}` again; report the message if it "
                    "stays.",
                )
            ]
        if check is check_database and findings:
            database_up = False
        results.append((title, findings))
    return results
