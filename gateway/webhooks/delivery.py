"""Sending webhooks: claim a due delivery, sign and POST its stored body, log the attempt, schedule
the next.
"""

import hashlib
import hmac
import logging
from dataclasses import dataclass
from datetime import timedelta

from flask import current_app
from sqlalchemy import bindparam, text

from .. import jobs
from ..accounts.models.brand import Brand
from ..clock import utcnow
from ..extensions import db
from ..notifications.events import notify_webhook_attempt
from ..outbox.attempts import schedule_retry
from ..outbox.kind import OutboxKind, wake_key
from ..outbox.lease import free_and_due
from ..outbox.schedule import BACKOFF, RetrySchedule
from ..states import DELIVERY, OUTBOX_FAILED, OUTBOX_PENDING, OUTBOX_SENT, guarded_update
from . import hosts as webhook_hosts
from .callback_urls import checked_destination
from .endpoint_secrets import open_secret
from .models.endpoint import WebhookEndpoint
from .models.webhook import WebhookAttempt, WebhookDelivery
from .signals import delivery_headers
from .transport import Outcome, post_body

log = logging.getLogger(__name__)

# docs/spec/CONTRACT.md: retries after 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h (8 attempts).
RETRY = RetrySchedule(BACKOFF, scale_setting="WEBHOOK_RETRY_SCALE")
MAX_ATTEMPTS = RETRY.max_attempts  # automatic attempts; a hand redelivery is extra
USER_AGENT = "PaymentGateway-Webhooks/1.0"
# The hot path writes through the tables (Core), not the ORM: no unit of work, no ORM UPDATE
# bookkeeping.
DELIVERIES, ATTEMPTS, BRANDS = WebhookDelivery.__table__, WebhookAttempt.__table__, Brand.__table__
ENDPOINTS = WebhookEndpoint.__table__
DUE_STATUSES = (OUTBOX_PENDING,)
RESULT_STATUSES = (OUTBOX_PENDING, OUTBOX_SENT, OUTBOX_FAILED)  # what an attempt leaves a row in


_D = DELIVERIES.c
# What signing a delivery to a webhook endpoint needs of it: its own secrets, and whether it still
# takes deliveries.
_E = ENDPOINTS.c
ENDPOINT_SIGNING = (
    _E.public_id,
    _E.secret_sealed,
    _E.secret_previous_sealed,
    _E.secret_previous_until,
    _E.enabled,
    _E.deleted_at,
)
# Built once: statements with bind parameters skip per-call construction and cache-key generation.
CLAIM_READ = (
    db.select(
        _D.event_id,
        _D.created_at,
        _D.attempts,
        _D.lease_expires_at,
        _D.status,
        _D.next_attempt_at,
        _D.url,
        _D.payload,
        _D.event,
        _D.manual_attempts,
        _D.redelivery_requested,
        _D.resume_at,
        _D.brand_id,
        BRANDS.c.webhook_secret,
        BRANDS.c.webhook_secret_previous,
        BRANDS.c.webhook_secret_previous_until,
        _D.endpoint_id,
        *(column.label(f"endpoint_{column.name}") for column in ENDPOINT_SIGNING),
    )
    .select_from(
        DELIVERIES.join(BRANDS, BRANDS.c.id == _D.brand_id).outerjoin(
            ENDPOINTS, ENDPOINTS.c.id == _D.endpoint_id
        )
    )
    .where(_D.id == bindparam("p_id"))
)


def brand_column(column):
    """The delivery's brand's `column`, as a scalar subquery (a RETURNING clause names one table
    only).
    """
    return db.select(column).where(BRANDS.c.id == _D.brand_id).scalar_subquery().label(column.name)


def endpoint_column(column):
    """The delivery's endpoint's `column` (NULL without one), as a scalar subquery."""
    return (
        db.select(column)
        .where(_E.id == _D.endpoint_id)
        .scalar_subquery()
        .label(f"endpoint_{column.name}")
    )


# The common claim in one statement: a due row that no attempt holds or ever abandoned, not
# redelivered by hand, within its automatic budget. It returns what the attempt needs; any other row
# goes through CLAIM_READ and CLAIM, whose reading tells the other cases apart.
CLAIM_FRESH = (
    db.update(DELIVERIES)
    .where(
        _D.id == bindparam("p_id"),
        _D.status.in_(DUE_STATUSES),
        _D.next_attempt_at <= bindparam("p_now", type_=_D.next_attempt_at.type),
        _D.lease_expires_at.is_(None),
        _D.redelivery_requested.is_(False),
        _D.attempts - _D.manual_attempts < MAX_ATTEMPTS,
    )
    .values(
        lease_expires_at=bindparam("p_lease", type_=_D.lease_expires_at.type),
        attempts=_D.attempts + 1,
    )
    .returning(
        _D.event_id,
        _D.created_at,
        _D.attempts,
        _D.url,
        _D.payload,
        _D.event,
        _D.manual_attempts,
        _D.resume_at,
        _D.brand_id,
        brand_column(BRANDS.c.webhook_secret),
        brand_column(BRANDS.c.webhook_secret_previous),
        brand_column(BRANDS.c.webhook_secret_previous_until),
        _D.endpoint_id,
        *(endpoint_column(column) for column in ENDPOINT_SIGNING),
    )
)
# `attempts` unchanged since the read proves nobody claimed in between: every claim increments it. A
# hand redelivery is beyond the automatic budget (MAX_ATTEMPTS counts the automatic attempts only).
CLAIM = (
    db.update(DELIVERIES)
    .where(
        _D.id == bindparam("p_id"),
        *free_and_due(DELIVERIES, bindparam("p_now", type_=_D.next_attempt_at.type)),
        _D.attempts == bindparam("p_attempts", type_=_D.attempts.type),
        _D.redelivery_requested == bindparam("p_manual", type_=_D.redelivery_requested.type),
        db.or_(_D.attempts - _D.manual_attempts < MAX_ATTEMPTS, _D.redelivery_requested),
    )
    .values(
        lease_expires_at=bindparam("p_lease", type_=_D.lease_expires_at.type),
        attempts=bindparam("p_next_attempts", type_=_D.attempts.type),
        manual_attempts=bindparam("p_manual_attempts", type_=_D.manual_attempts.type),
        redelivery_requested=False,
    )
)
RECORD = (
    guarded_update(DELIVERY, DELIVERIES, DUE_STATUSES, RESULT_STATUSES)
    .where(
        _D.id == bindparam("p_id"),
        _D.lease_expires_at == bindparam("p_lease", type_=_D.lease_expires_at.type),
    )
    .values(
        status=bindparam("p_status", type_=_D.status.type),
        next_attempt_at=bindparam("p_next_at", type_=_D.next_attempt_at.type),
        lease_expires_at=None,
        updated_at=bindparam("p_now", type_=_D.updated_at.type),
        response_status=bindparam("p_response_status", type_=_D.response_status.type),
        response_body=bindparam("p_response_body", type_=_D.response_body.type),
        last_error=bindparam("p_error", type_=_D.last_error.type),
        sent_at=bindparam("p_sent_at", type_=_D.sent_at.type),
        resume_at=None,
    )
)
LOG_ATTEMPT = db.insert(ATTEMPTS)
# The claim's commit need not wait for PostgreSQL to flush it to disk. Lost in a crash, a claim only
# never happened: the row is due again with its lease free, and the attempt is made again (a webhook
# is delivered at least once; receivers drop a repeat by its event id). It cannot be lost once its
# attempt's result is recorded: that commit waits for the WAL up to itself, the claim included.
ASYNC_COMMIT = text("SET LOCAL synchronous_commit = off")
# On PostgreSQL the common claim sets it itself, in the same round trip: set_config(…, true) is SET
# LOCAL as a function, evaluated only for the row claimed.
CLAIM_FRESH_POSTGRESQL = CLAIM_FRESH.returning(
    db.func.set_config("synchronous_commit", "off", True).label("async_commit")
)

ABANDONED = (
    "No result: the process sending this attempt stopped before recording one (its lease expired)."
)


def sign_payload(secret, body):
    """Hex HMAC-SHA256 of the exact bytes sent, keyed with the brand's webhook secret."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_v1(timestamp, body, *secrets):
    """X-Service-Signature-V1: `t=<unix>,v1=<hex>` (one v1 per secret), each an HMAC of
    `<t>.<body>`.

    Unlike X-Service-Signature it covers the time of signing, so a captured webhook cannot be
    replayed outside the receiver's tolerance with a fresh timestamp (docs/webhooks.md).
    """
    message = f"{timestamp}.".encode() + body
    return ",".join(
        [f"t={timestamp}"]
        + [f"v1={hmac.new(s.encode(), message, hashlib.sha256).hexdigest()}" for s in secrets]
    )


@dataclass
class Claim:
    """What one attempt needs, read before the claim commits, so no ORM object outlives it."""

    delivery_id: int
    event_id: str
    created_at: object
    attempts: int
    lease: object
    url: str
    payload: str
    event: str
    secret: str
    previous_secret: str | None = None
    previous_until: object = None
    manual_attempts: int = 0
    manual: bool = False  # a hand redelivery
    resume_at: object = None  # the automatic attempt a failed hand redelivery goes back to
    brand_id: int | None = None  # whose share of the workers the attempt takes (webhooks.hosts)
    endpoint_id: int | None = None  # the webhook endpoint it goes to, signed with its secret
    refusal: str | None = None  # why it is not sent (its endpoint disabled, deleted or unreadable)

    @property
    def automatic_attempts(self):
        """Attempts made by the schedule, this one included unless it is by hand."""
        return self.attempts - self.manual_attempts


def deliver_webhook(delivery_id, attempts=None):
    """Make the next attempt of a due delivery if this process wins its claim; else do nothing.

    `attempts`, given by a scheduled retry, is how many attempts the row had when it was scheduled.
    """
    claim = claim_delivery(delivery_id, attempts)
    if claim is None:
        return None
    outcome = post_webhook(claim)
    try:
        return record_attempt(claim, outcome)
    finally:  # after the record: nothing stands between the receiver's answer and its commit
        webhook_hosts.release(
            claim.url, delivery_id, claim.attempts, outcome.duration_ms / 1000, claim.brand_id
        )


def claim_delivery(delivery_id, scheduled_attempts=None):
    """Take the row's lease with a guarded UPDATE; a Claim when this process owns the next
    attempt."""
    now = utcnow()
    lease = now + timedelta(seconds=current_app.config["WEBHOOK_LEASE_SECONDS"])
    claim = {"p_id": delivery_id, "p_now": now, "p_lease": lease}
    postgresql = db.session.get_bind().dialect.name == "postgresql"
    row = db.session.execute(CLAIM_FRESH_POSTGRESQL if postgresql else CLAIM_FRESH, claim).first()
    if row is None:
        # Not a plainly due row: abandoned, by hand, not yet due, exhausted, already claimed, or
        # gone.
        db.session.rollback()
        return claim_after_reading(delivery_id, now, lease, scheduled_attempts)
    if not webhook_hosts.admit(row.url, delivery_id, row.attempts, row.brand_id):
        db.session.rollback()  # the claim is undone with it
        park(delivery_id, now)
        return None
    db.session.commit()  # asynchronous on PostgreSQL: the claim asked for it
    return claim_of(row, delivery_id, row.attempts, lease, row.manual_attempts, False)


def claim_of(row, delivery_id, attempts, lease, manual_attempts, manual):
    """The Claim of a claimed row: signed with its endpoint's secrets when it goes to one, else with
    the brand's."""
    claim = Claim(
        delivery_id,
        row.event_id,
        row.created_at,
        attempts,
        lease,
        row.url,
        row.payload,
        row.event,
        row.webhook_secret,
        row.webhook_secret_previous,
        row.webhook_secret_previous_until,
        manual_attempts,
        manual,
        row.resume_at,
        row.brand_id,
        row.endpoint_id,
    )
    if row.endpoint_id is None:
        return claim
    public_id = row.endpoint_public_id
    claim.secret = open_secret(row.endpoint_secret_sealed, public_id)
    claim.previous_secret = open_secret(row.endpoint_secret_previous_sealed, public_id)
    claim.previous_until = row.endpoint_secret_previous_until
    if row.endpoint_deleted_at is not None:
        claim.refusal = "The webhook endpoint was deleted."
    elif not row.endpoint_enabled:
        claim.refusal = "The webhook endpoint is disabled."
    elif claim.secret is None:
        claim.refusal = "The webhook endpoint's secret cannot be opened (SECRET_KEY changed)."
    return claim


def commit_claim():
    """Commit a won claim; on PostgreSQL without waiting for the disk (ASYNC_COMMIT says why)."""
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(ASYNC_COMMIT)
    db.session.commit()


def claim_after_reading(delivery_id, now, lease, scheduled_attempts):
    """The claim of a row that is not plainly due: read it, then take it with CLAIM guarded on what
    was read (an abandoned attempt is logged, a hand redelivery counted); or fail it, park it, wake
    it later."""
    row = db.session.execute(CLAIM_READ, {"p_id": delivery_id}).first()
    if row is None:
        db.session.rollback()
        return None
    if claimable(row, now) and not webhook_hosts.admit(
        row.url, delivery_id, row.attempts + 1, row.brand_id
    ):
        db.session.rollback()
        park(delivery_id, now)
        return None
    manual = bool(row.redelivery_requested)
    manual_attempts = row.manual_attempts + int(manual)
    won = (
        db.session.execute(
            CLAIM,
            {
                "p_id": delivery_id,
                "p_now": now,
                "p_attempts": row.attempts,
                "p_manual": manual,
                "p_lease": lease,
                "p_next_attempts": row.attempts + 1,
                "p_manual_attempts": manual_attempts,
            },
        ).rowcount
        == 1
    )
    if not won:
        db.session.rollback()
        webhook_hosts.release(row.url, delivery_id, row.attempts + 1, brand_id=row.brand_id)
        if only_not_yet_due(row, now):
            wake_when_due(delivery_id, row, rescheduled=scheduled_attempts == row.attempts)
        return None
    if row.lease_expires_at is not None:
        log_abandoned(delivery_id, row.lease_expires_at)
    commit_claim()
    return claim_of(row, delivery_id, row.attempts + 1, lease, manual_attempts, manual)


def claimable(row, now):
    """Whether the read row is free for its next attempt now (the claim's own conditions, read in
    Python).
    """
    return (
        row.status in DUE_STATUSES
        and row.next_attempt_at is not None
        and row.next_attempt_at <= now
        and (row.lease_expires_at is None or row.lease_expires_at < now)
        and (row.attempts - row.manual_attempts < MAX_ATTEMPTS or bool(row.redelivery_requested))
    )


def park(delivery_id, now):
    """A delivery held back for its host's share waits for an attempt there to end; this wake-up, a
    lease later, covers a worker killed mid-attempt (whose end never comes)."""
    try:
        jobs.enqueue_at(
            now + timedelta(seconds=current_app.config["WEBHOOK_LEASE_SECONDS"]),
            jobs.WEBHOOKS,
            jobs.DELIVER_WEBHOOK,
            delivery_id,
        )
    except Exception as error:  # noqa: BLE001 - the sweep wakes it when due
        log.warning(
            "delivery %s: parked without a fallback wake-up (%s); the sweep will wake it",
            delivery_id,
            error,
        )


def log_attempt(delivery_id, attempted_at, status=None, body=None, duration_ms=None, error=None):
    """Add one row to the attempt log in the current transaction."""
    db.session.execute(
        LOG_ATTEMPT,
        {
            "delivery_id": delivery_id,
            "attempted_at": attempted_at,
            "response_status": status,
            "response_body": body,
            "duration_ms": duration_ms,
            "error": error,
        },
    )


def log_abandoned(delivery_id, lease_expires_at):
    """Log the attempt whose lease expired with no result recorded."""
    log_attempt(delivery_id, lease_expires_at, error=ABANDONED)


def only_not_yet_due(row, now):
    """Whether the read row was free to claim but for its next attempt time (a wake-up that came
    early).
    """
    return (
        row.status in DUE_STATUSES
        and row.next_attempt_at is not None
        and row.next_attempt_at > now
        and (row.lease_expires_at is None or row.lease_expires_at < now)
    )


def wake_when_due(delivery_id, row, rescheduled):
    """An early wake-up came to nothing: free the attempt's wake-up keys so the sweep may wake it
    when due, and, if it was this attempt's scheduled retry, schedule it again at the due time."""
    unique = wake_key(OUTBOX, delivery_id, row.created_at, row.attempts)
    try:
        forget = getattr(jobs.backend(current_app._get_current_object()), "forget_wake", None)
        if forget is not None:
            forget(unique)
        if rescheduled:
            jobs.enqueue_at(
                row.next_attempt_at,
                jobs.WEBHOOKS,
                jobs.DELIVER_WEBHOOK,
                delivery_id,
                row.attempts,
                unique=unique,
            )
    except Exception as error:  # noqa: BLE001 - the sweep wakes it when due
        log.warning(
            "delivery %s: early wake-up not rescheduled (%s); the sweep will wake it",
            delivery_id,
            error,
        )


def post_webhook(claim):
    """POST the stored body, signed now, to the delivery's URL; never raises for the receiver's
    faults.
    """
    if claim.refusal is not None:
        return Outcome(error=claim.refusal)
    refusal, addresses = checked_destination(claim.url)
    if refusal is not None:
        return Outcome(error=refusal)
    body, now = claim.payload.encode(), utcnow()
    timestamp = int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Service-Signature": sign_payload(claim.secret, body),
        "X-Service-Timestamp": str(timestamp),
        "X-Service-Event": claim.event,
        "X-Service-Delivery": str(claim.delivery_id),
    }
    signing = [claim.secret]
    # The native plugins (WHMCS, WooCommerce, Laravel) read the same values under these names.
    headers["X-Signature"] = headers["X-Service-Signature"]
    headers["X-Timestamp"] = headers["X-Service-Timestamp"]
    for _, extra in delivery_headers.send(claim):  # a dialect's own IPN headers (compat/ipn.py)
        headers.update(extra or {})
    # During a rotation's overlap the rotated-out secret signs too: a receiver not yet updated still
    # verifies.
    if claim.previous_secret and claim.previous_until is not None and now < claim.previous_until:
        headers["X-Service-Signature-Previous"] = sign_payload(claim.previous_secret, body)
        signing.append(claim.previous_secret)
    headers["X-Service-Signature-V1"] = signature_v1(timestamp, body, *signing)
    # To the addresses just checked, never to a second answer from DNS (which may be private).
    return post_body(
        claim.url,
        body,
        headers,
        current_app.config.get("WEBHOOK_CONNECT_TIMEOUT", 5),
        current_app.config.get("WEBHOOK_TIMEOUT", 10),
        addresses=addresses,
    )


def next_state(attempts, outcome, now, resume_at=None):
    """The delivery's status and next attempt time after automatic attempt number `attempts` (or a
    hand attempt after it, which goes back to the automatic attempt `resume_at` when there is
    one)."""
    if outcome.success:
        return OUTBOX_SENT, None
    if RETRY.exhausted(attempts):
        return OUTBOX_FAILED, None
    if resume_at is not None:
        return OUTBOX_PENDING, resume_at
    return OUTBOX_PENDING, now + RETRY.delay(attempts)


def without_nul(text):
    """`text` without NUL characters, which PostgreSQL text columns refuse."""
    return None if text is None else text.replace("\x00", "")


def record_attempt(claim, outcome):
    """Log the attempt and move the delivery on, unless its lease was lost to another process."""
    now = utcnow()
    status, next_at = next_state(
        claim.automatic_attempts, outcome, now, claim.resume_at if claim.manual else None
    )
    body, error = without_nul(outcome.body), without_nul(outcome.error)
    log_attempt(claim.delivery_id, now, outcome.status, body, outcome.duration_ms, error)
    DELIVERY.check(
        DUE_STATUSES, (status,)
    )  # RECORD was checked for every result status; this one is among them
    kept = (
        db.session.execute(
            RECORD,
            {
                "p_id": claim.delivery_id,
                "p_lease": claim.lease,
                "p_status": status,
                "p_next_at": next_at,
                "p_now": now,
                "p_response_status": outcome.status,
                "p_response_body": body,
                "p_error": None if outcome.success else (error or f"HTTP {outcome.status}")[:500],
                "p_sent_at": now if outcome.success else None,
            },
        ).rowcount
        == 1
    )
    if kept:
        notify_webhook_attempt(claim.delivery_id, status, claim.automatic_attempts)
    db.session.commit()
    if not kept:
        log.warning(
            "delivery %s: lease lost during the attempt; another process owns it now",
            claim.delivery_id,
        )
        return None
    if status == OUTBOX_PENDING:
        schedule_retry(
            OUTBOX, claim.delivery_id, claim.created_at, claim.attempts, next_at, claim.attempts
        )
    return status


def expired_lease_returned(delivery_id, lease_expires_at, failed):
    """The sweep returned a lease that ran out: log the attempt it held; one that used the last
    automatic attempt tells the merchant."""
    log_abandoned(delivery_id, lease_expires_at)
    if failed:
        notify_webhook_attempt(delivery_id, OUTBOX_FAILED, MAX_ATTEMPTS)


OUTBOX = OutboxKind(
    name="delivery",
    machine=DELIVERY,
    queue=jobs.WEBHOOKS,
    job=jobs.DELIVER_WEBHOOK,
    schedule=RETRY,
    expired_error=ABANDONED,
    # Hand attempts do not count against the budget, and a waiting hand redelivery still goes.
    exhausted=lambda t: db.and_(
        t.c.attempts - t.c.manual_attempts >= MAX_ATTEMPTS, t.c.redelivery_requested.is_(False)
    ),
    on_expired=expired_lease_returned,
)
