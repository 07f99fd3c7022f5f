"""Leases on outbound SMS, shared by both ways out: take one, settle it by a report, return expired
ones.
"""

from datetime import timedelta

from ..states import OUTBOUND_SMS, write_status
from .models.outbound_sms import OutboundSms

RETRY_DELAYS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(hours=1),
)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE_EXPIRED = "Not reported within its lease; returned to the queue."


def take_lease(message_id, holder, until, now):
    """Lease one queued, due message with a guarded UPDATE; True when this caller won it."""
    return (
        write_status(
            OUTBOUND_SMS,
            (OutboundSms.id == message_id, OutboundSms.next_attempt_at <= now),
            ("queued",),
            "leased",
            leased_by=holder,
            lease_expires_at=until,
            attempts=OutboundSms.attempts + 1,
            updated_at=now,
        )
        == 1
    )


def outcome_values(attempts, status, error, now):
    """The columns after a report: sent; queued again after a backoff; or failed after the last
    attempt.
    """
    released = {"lease_expires_at": None, "leased_by": None, "updated_at": now}
    if status == "sent":
        return {**released, "status": "sent", "sent_at": now, "last_error": None}
    error = (error or "Reported as failed.")[:500]
    if attempts >= MAX_ATTEMPTS:
        return {**released, "status": "failed", "last_error": error}
    return {
        **released,
        "status": "queued",
        "last_error": error,
        "next_attempt_at": now + RETRY_DELAYS[attempts - 1],
    }


def settle_lease(where, values):
    """Write a report's outcome (outcome_values) on a still-leased message; True when this lease
    still held it.
    """
    values = dict(values)
    return write_status(OUTBOUND_SMS, where, ("leased",), values.pop("status"), **values) == 1


def release_expired_leases(now, brand_id=None):
    """Return messages whose lease ran out to the queue, or fail them when no attempt is left (no
    commit).
    """
    base = (OutboundSms.lease_expires_at < now,) + (
        () if brand_id is None else (OutboundSms.brand_id == brand_id,)
    )
    released = {
        "lease_expires_at": None,
        "leased_by": None,
        "updated_at": now,
        "last_error": LEASE_EXPIRED,
    }
    write_status(
        OUTBOUND_SMS,
        base + (OutboundSms.attempts >= MAX_ATTEMPTS,),
        ("leased",),
        "failed",
        **released,
    )
    write_status(
        OUTBOUND_SMS,
        base + (OutboundSms.attempts < MAX_ATTEMPTS,),
        ("leased",),
        "queued",
        next_attempt_at=now,
        **released,
    )
