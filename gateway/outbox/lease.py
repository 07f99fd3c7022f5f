"""Leases on outbox rows: take one with a guarded UPDATE, settle it with the attempt's outcome,
return the ones that ran out."""

from ..extensions import db
from ..states import OUTBOX_FAILED, OUTBOX_PENDING, OUTBOX_SENT, write_status


def free_and_due(table, now):
    """SQL: the row waits, its attempt is due, and no live attempt holds it."""
    c = table.c
    return (
        c.status == OUTBOX_PENDING,
        c.next_attempt_at <= now,
        db.or_(c.lease_expires_at.is_(None), c.lease_expires_at < now),
    )


def take_lease(kind, row_id, now, *where, **values):
    """Lease one pending, due row that no live attempt holds, counting the attempt; the lease's
    expiry when this caller won it (of two racing callers one wins), else None."""
    c, until = kind.table.c, now + kind.lease
    won = write_status(
        kind.machine,
        (c.id == row_id, *free_and_due(kind.table, now)[1:], *where),
        (OUTBOX_PENDING,),
        OUTBOX_PENDING,
        lease_expires_at=until,
        attempts=c.attempts + 1,
        updated_at=now,
        **values,
    )
    return until if won == 1 else None


def outcome(schedule, attempts, error, now, not_before=None):
    """The columns after attempt number `attempts`: sent; pending again after the schedule's delay
    (never sooner than `not_before`); or failed once the schedule is used up."""
    released = {"lease_expires_at": None, "updated_at": now}
    if error is None:
        return {
            **released,
            "status": OUTBOX_SENT,
            "sent_at": now,
            "last_error": None,
            "next_attempt_at": None,
        }
    error = str(error)[:500]
    if schedule.exhausted(attempts):
        return {**released, "status": OUTBOX_FAILED, "last_error": error, "next_attempt_at": None}
    delay = schedule.delay(attempts)
    if not_before is not None:
        delay = max(delay, not_before)
    return {
        **released,
        "status": OUTBOX_PENDING,
        "last_error": error,
        "next_attempt_at": now + delay,
    }


def settle(kind, where, values):
    """Write an attempt's outcome (outcome()) while its lease still holds the row; True when it
    did. `where` names the attempt: its lease's expiry, or its attempt number."""
    values = dict(values)
    c = kind.table.c
    return (
        write_status(
            kind.machine,
            (*where, c.lease_expires_at.is_not(None)),
            (OUTBOX_PENDING,),
            values.pop("status"),
            **values,
        )
        == 1
    )


def release_expired(kind, now, *where):
    """Return rows whose lease ran out to the queue, due now, or fail those with no attempt left;
    how many (no commit). Each is moved on its own lease, so an attempt that records its result
    meanwhile keeps it."""
    c = kind.table.c
    expired = db.session.execute(
        db.select(c.id, c.lease_expires_at, kind.exhausted_sql().label("exhausted")).where(
            c.status == OUTBOX_PENDING, c.lease_expires_at < now, *where
        )
    ).all()
    for row_id, lease, exhausted in expired:
        failed = bool(exhausted)
        moved = write_status(
            kind.machine,
            (c.id == row_id, c.lease_expires_at == lease),
            (OUTBOX_PENDING,),
            OUTBOX_FAILED if failed else OUTBOX_PENDING,
            lease_expires_at=None,
            next_attempt_at=None if failed else now,
            last_error=kind.expired_error,
            updated_at=now,
        )
        if moved and kind.on_expired is not None:
            kind.on_expired(row_id, lease, failed)
    return len(expired)
