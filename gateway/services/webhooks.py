"""Sending webhooks: claim a due delivery, sign and POST its stored body, log the attempt, schedule the next."""
import hashlib
import hmac
import logging
from dataclasses import dataclass
from datetime import timedelta

from flask import current_app

from .. import jobs
from ..clock import utcnow
from ..extensions import db
from ..models import Brand, WebhookAttempt, WebhookDelivery
from ..models.webhook import DUE_STATUSES
from .callback_urls import private_destination
from .webhook_http import Outcome, post_body

log = logging.getLogger(__name__)

RETRY_DELAYS = (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2),
                timedelta(hours=6), timedelta(hours=12), timedelta(hours=24))
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
USER_AGENT = "PaymentGateway-Webhooks/1.0"
ABANDONED = "No result: the process sending this attempt stopped before recording one (its lease expired)."


def sign_payload(secret, body):
    """Hex HMAC-SHA256 of the exact bytes sent, keyed with the brand's webhook secret."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Claim:
    """What one attempt needs, read before the claim commits, so no ORM object outlives it."""

    delivery_id: int
    event_id: str
    attempts: int
    lease: object
    url: str
    payload: str
    event: str
    secret: str


def deliver_webhook(delivery_id):
    """Make the next attempt of a due delivery if this process wins its claim; else do nothing."""
    claim = claim_delivery(delivery_id)
    if claim is None:
        return None
    return record_attempt(claim, post_webhook(claim))


def claim_delivery(delivery_id):
    """Take the row's lease with a guarded UPDATE; a Claim when this process owns the next attempt."""
    now = utcnow()
    row = db.session.execute(
        db.select(WebhookDelivery.event_id, WebhookDelivery.attempts, WebhookDelivery.lease_expires_at,
                  WebhookDelivery.url, WebhookDelivery.payload, WebhookDelivery.event, Brand.webhook_secret)
        .join(Brand, Brand.id == WebhookDelivery.brand_id).where(WebhookDelivery.id == delivery_id)
    ).first()
    if row is None:
        db.session.rollback()
        return None
    lease = now + timedelta(seconds=current_app.config["WEBHOOK_LEASE_SECONDS"])
    # `attempts` unchanged since the read proves nobody claimed in between: every claim increments it.
    won = db.session.execute(
        db.update(WebhookDelivery)
        .where(WebhookDelivery.id == delivery_id, WebhookDelivery.status.in_(DUE_STATUSES),
               WebhookDelivery.next_attempt_at <= now, WebhookDelivery.attempts == row.attempts,
               db.or_(WebhookDelivery.lease_expires_at.is_(None), WebhookDelivery.lease_expires_at < now))
        .values(lease_expires_at=lease, attempts=row.attempts + 1)
        .execution_options(synchronize_session=False)
    ).rowcount == 1
    if not won:
        db.session.rollback()
        return None
    if row.lease_expires_at is not None:
        db.session.add(WebhookAttempt(delivery_id=delivery_id, attempted_at=row.lease_expires_at, error=ABANDONED))
    db.session.commit()
    return Claim(delivery_id, row.event_id, row.attempts + 1, lease, row.url, row.payload, row.event, row.webhook_secret)


def post_webhook(claim):
    """POST the stored body, signed now, to the delivery's URL; never raises for the receiver's faults."""
    refusal = private_destination(claim.url)
    if refusal is not None:
        return Outcome(error=refusal)
    body = claim.payload.encode()
    headers = {
        "Content-Type": "application/json", "User-Agent": USER_AGENT,
        "X-Service-Signature": sign_payload(claim.secret, body),
        "X-Service-Timestamp": str(int(utcnow().timestamp())),
        "X-Service-Event": claim.event, "X-Service-Delivery": str(claim.delivery_id),
    }
    return post_body(claim.url, body, headers, current_app.config.get("WEBHOOK_CONNECT_TIMEOUT", 5),
                     current_app.config.get("WEBHOOK_TIMEOUT", 10))


def next_state(attempts, outcome, now):
    """The delivery's status and next attempt time after attempt number `attempts`."""
    if outcome.success:
        return "success", None
    if attempts >= MAX_ATTEMPTS:
        return "failed", None
    return "retrying", now + RETRY_DELAYS[attempts - 1]


def record_attempt(claim, outcome):
    """Log the attempt and move the delivery on, unless its lease was lost to another process."""
    now = utcnow()
    status, next_at = next_state(claim.attempts, outcome, now)
    db.session.add(WebhookAttempt(delivery_id=claim.delivery_id, attempted_at=now, response_status=outcome.status,
                                  response_body=outcome.body, duration_ms=outcome.duration_ms,
                                  error=outcome.error))
    kept = db.session.execute(
        db.update(WebhookDelivery)
        .where(WebhookDelivery.id == claim.delivery_id, WebhookDelivery.lease_expires_at == claim.lease)
        .values(status=status, next_attempt_at=next_at, lease_expires_at=None, updated_at=now,
                response_status=outcome.status, response_body=outcome.body)
        .execution_options(synchronize_session=False)
    ).rowcount == 1
    db.session.commit()
    if not kept:
        log.warning("delivery %s: lease lost during the attempt; another process owns it now", claim.delivery_id)
        return None
    if status == "retrying":
        try:
            jobs.enqueue_at(next_at, jobs.WEBHOOKS, jobs.DELIVER_WEBHOOK, claim.delivery_id,
                            unique=f"delivery:{claim.event_id}:{claim.attempts}")
        except Exception as error:  # noqa: BLE001 - the sweep wakes it when due
            log.warning("delivery %s: retry not scheduled (%s); the sweep will wake it", claim.delivery_id, error)
    return status
