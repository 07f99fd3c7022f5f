"""Leases on outbound SMS, shared by both ways out: take one, settle it by a report, return expired ones."""
from datetime import timedelta

from ..extensions import db
from .models.outbound_sms import OutboundSms

RETRY_DELAYS = (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=15), timedelta(hours=1))
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE_EXPIRED = "Not reported within its lease; returned to the queue."


def take_lease(message_id, holder, until, now):
    """Lease one queued, due message with a guarded UPDATE; True when this caller won it."""
    return db.session.execute(
        db.update(OutboundSms)
        .where(OutboundSms.id == message_id, OutboundSms.status == "queued", OutboundSms.next_attempt_at <= now)
        .values(status="leased", leased_by=holder, lease_expires_at=until, attempts=OutboundSms.attempts + 1,
                updated_at=now)
        .execution_options(synchronize_session=False)
    ).rowcount == 1


def outcome_values(attempts, status, error, now):
    """The columns after a report: sent; queued again after a backoff; or failed after the last attempt."""
    released = {"lease_expires_at": None, "leased_by": None, "updated_at": now}
    if status == "sent":
        return {**released, "status": "sent", "sent_at": now, "last_error": None}
    error = (error or "Reported as failed.")[:500]
    if attempts >= MAX_ATTEMPTS:
        return {**released, "status": "failed", "last_error": error}
    return {**released, "status": "queued", "last_error": error, "next_attempt_at": now + RETRY_DELAYS[attempts - 1]}


def release_expired_leases(now, brand_id=None):
    """Return messages whose lease ran out to the queue, or fail them when no attempt is left (no commit)."""
    base = db.update(OutboundSms).where(OutboundSms.status == "leased", OutboundSms.lease_expires_at < now)
    if brand_id is not None:
        base = base.where(OutboundSms.brand_id == brand_id)
    released = {"lease_expires_at": None, "leased_by": None, "updated_at": now, "last_error": LEASE_EXPIRED}
    for query, values in ((base.where(OutboundSms.attempts >= MAX_ATTEMPTS), {"status": "failed"}),
                          (base.where(OutboundSms.attempts < MAX_ATTEMPTS), {"status": "queued", "next_attempt_at": now})):
        db.session.execute(query.values(**released, **values).execution_options(synchronize_session=False))
