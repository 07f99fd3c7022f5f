"""One attempt of an outbox row: lease it, send it, record the outcome, wake the retry."""

import logging
from datetime import timedelta

from .. import jobs
from ..clock import utcnow
from ..extensions import db
from ..states import OUTBOX_PENDING
from .kind import wake_key
from .lease import outcome, settle, take_lease

log = logging.getLogger(__name__)


def make_attempt(kind, model, row_id, send, *where, **lease_values):
    """Send row `row_id` with `send(row)` (None when it went, else the error) if this process wins
    its lease; the status it leaves, or None when another process had it or its lease was lost.

    The lease commits before the slow send and the outcome after it: a crash in between leaves a
    lease that runs out and is returned by the sweep, never a lost row. An error's `retry_after`
    (seconds) puts the next attempt no sooner.
    """
    lease = take_lease(kind, row_id, utcnow(), *where, **lease_values)
    if lease is None:
        db.session.rollback()
        return None
    db.session.commit()
    row = db.session.get(model, row_id)
    error = send(row)
    pause = getattr(error, "retry_after", None)
    values = outcome(
        kind.schedule, row.attempts, error, utcnow(), pause and timedelta(seconds=pause)
    )
    c = kind.table.c
    kept = settle(kind, (c.id == row_id, c.lease_expires_at == lease), values)
    db.session.commit()
    if not kept:
        log.warning(
            "%s %s: lease lost during the attempt; its outcome is not recorded", kind.name, row_id
        )
        return None
    if values["status"] == OUTBOX_PENDING:
        schedule_retry(kind, row_id, row.created_at, row.attempts, values["next_attempt_at"])
    elif values["last_error"]:
        log.warning("%s %s failed after %s attempts: %s", kind.name, row_id, row.attempts, error)
    return values["status"]


def wake_after_commit(kind, row):
    """Wake the row's next attempt once the current transaction commits."""
    jobs.wake_after_commit(
        kind.queue, kind.job, row.id, unique=wake_key(kind, row.id, row.created_at, row.attempts)
    )


def schedule_retry(kind, row_id, created_at, attempts, when, *args):
    """Wake the attempt after `attempts` at `when` (the job gets `row_id, *args`); without the
    scheduler the sweep does."""
    try:
        jobs.enqueue_at(
            when,
            kind.queue,
            kind.job,
            row_id,
            *args,
            unique=wake_key(kind, row_id, created_at, attempts),
        )
    except Exception as error:  # noqa: BLE001 - the sweep wakes it when due
        log.warning(
            "%s %s: retry not scheduled (%s); the sweep will wake it", kind.name, row_id, error
        )
