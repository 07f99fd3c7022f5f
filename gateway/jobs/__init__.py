"""Background work: RQ queues on Redis when REDIS_URL is set, an in-process executor otherwise."""

import logging

from flask import current_app, has_app_context
from sqlalchemy import event
from werkzeug.utils import import_string

from ..extensions import db
from .redis_health import RedisUnavailable

log = logging.getLogger(__name__)

# The database is the source of truth and a job only a wake-up: losing one (Redis down, a worker
# killed) delays work until the periodic sweep finds the row again, it never loses it.
WEBHOOKS, SMS, MAINTENANCE, MAIL = "webhooks", "sms", "maintenance", "mail"
QUEUES = (MAINTENANCE, WEBHOOKS, SMS, MAIL)  # the order a worker serves them in: sweeps are short
DELIVER_WEBHOOK = "gateway.webhooks.delivery.deliver_webhook"
SEND_SMS = "gateway.sms.provider.send_outbound_sms"
# (name, job, seconds between runs or the config key that holds them)
PERIODIC = (
    # Every outbox (webhooks, e-mail, notifications, outbound SMS): run-out leases, lost wake-ups.
    ("sweep-outbox", "gateway.outbox.sweep.sweep_outbox", "SWEEP_INTERVAL"),
    ("expire-payments", "gateway.payments.lifecycle.expire_due_payments", 60),
    ("prune-idempotency", "gateway.accounts.idempotency.prune_idempotency_records", 3600),
    # Events are kept 30 days at least (the events API); their delivery records stay.
    ("prune-events", "gateway.webhooks.event_log.prune_events", 3600),
    # Stored credits a waiting claim could match, left unmatched by a request that died after
    # storing them.
    ("heal-matching", "gateway.sms.matching.heal_matching", "SWEEP_INTERVAL"),
    # Credits whose chain healed but whose release died with its request.
    ("settle-chains", "gateway.sms.balance_chain.settle_unsettled", "SWEEP_INTERVAL"),
    # A gap in a wallet's balance chain still open after its grace: the phone missed a text.
    ("chain-gaps", "gateway.sms.chain_gaps.tell_chain_gaps", "SWEEP_INTERVAL"),
    ("prune-rate-limits", "gateway.accounts.rate_limit_store.prune_rate_limit_counters", 3600),
    # Phones gone silent and texts no payment claimed tell the merchant.
    ("notifications", "gateway.notifications.watch.sweep_notifications", "SWEEP_INTERVAL"),
    ("prune-notifications", "gateway.notifications.watch.prune_notifications", 3600),
    # The phones' notifications, read or not, after 90 days.
    ("prune-phone-notifications", "gateway.devices.notifications.prune_phone_notifications", 3600),
    # Sent invoices past their due date become overdue, each with one reminder.
    ("invoice-overdue", "gateway.invoices.overdue.sweep_overdue_invoices", 900),
    # Each brand's exchange rate feed re-rates the currencies it accepts (payments/rate_feed.py).
    ("rate-feeds", "gateway.payments.rate_feed.refresh_rate_feeds", 3600),
    # Wallet payments (bKash, Nagad APIs) left in between, and refunds a wallet did not answer in
    # time: asked for with the wallet's queries.
    ("settle-wallets", "gateway.wallets.refunds.settle_wallets", 60),
)
JOB_TIMEOUT = 30  # below the 60 s lease: a stuck job dies before another process may take its row
# How long a wake-up key suppresses a duplicate enqueue of the same attempt, at most: the job frees
# it as it starts, so this only bounds a job lost before it started. Like a lease: a sweep or two,
# not five minutes.
WAKE_TTL = 60


_worker_app = None


def run_job(path, *args):
    """Run a job function by dotted path in a fresh application context (the RQ entry point)."""
    app = current_app._get_current_object() if has_app_context() else worker_app()
    with app.app_context():
        import_string(path)(*args)


def worker_app():
    """The application a plain `rq worker` process runs jobs under, built from the environment."""
    global _worker_app
    if _worker_app is None:
        from .. import create_app

        _worker_app = create_app()
    return _worker_app


def interval(app, every):
    """Seconds between runs of a periodic job."""
    return int(app.config[every]) if isinstance(every, str) else every


def enqueue(queue, path, *args, unique=None):
    """Wake `path(*args)` up in the background; raises when Redis cannot take the job."""
    return backend(current_app._get_current_object()).enqueue(queue, path, args, unique)


def enqueue_at(when, queue, path, *args, unique=None):
    """Wake `path(*args)` up at `when` (RQ's scheduler); without Redis the periodic sweep does
    it."""
    return backend(current_app._get_current_object()).enqueue_at(when, queue, path, args, unique)


def backend(app):
    """The job runner for the app's current REDIS_URL (tests switch it), built once per URL."""
    url = app.config.get("REDIS_URL")
    runners = app.extensions.setdefault("gateway_jobs", {})
    if url not in runners:
        if url:
            from .rq_queues import RedisQueues

            runners[url] = RedisQueues(url)
        else:
            from .in_process import InProcessExecutor

            runners[url] = InProcessExecutor(app)
    return runners[url]


def wake_after_commit(queue, path, *args, unique=None):
    """Enqueue a job once the current database transaction commits; forgotten if it does not."""
    db.session.info.setdefault("gateway_wakeups", []).append((queue, path, args, unique))


@event.listens_for(db.session, "after_commit")
def enqueue_wakeups(session):
    """Send the committed transaction's wake-ups; a failure is logged, the sweep finds the rows."""
    for queue, path, args, unique in session.info.pop("gateway_wakeups", None) or ():
        try:
            enqueue(queue, path, *args, unique=unique)
        except RedisUnavailable:
            pass  # Redis is down: logged once for the whole outage, and the sweep wakes the row
        except Exception as error:  # noqa: BLE001 - Redis down must not fail a committed request
            log.warning("could not enqueue %s%r (%s); the sweep will pick it up", path, args, error)


@event.listens_for(db.session, "after_transaction_end")
def forget_wakeups(session, transaction):
    """A transaction that ended without committing leaves nothing to wake."""
    if transaction.parent is None:
        session.info.pop("gateway_wakeups", None)


def init_app(app):
    """Without Redis, the first request a serving process handles starts its executor and sweeps."""

    @app.before_request
    def start_in_process_jobs():
        if not app.config.get("REDIS_URL"):
            backend(app).start()
