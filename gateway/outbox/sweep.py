"""The outbox sweep: return run-out leases and wake every due row of every kind, whatever became of
its job.

Each kind is named by dotted path, as PERIODIC names jobs, so this shared package imports no
domain.
"""

from werkzeug.utils import import_string

from .. import jobs
from ..clock import utcnow
from ..extensions import db
from .kind import wake_key
from .lease import free_and_due, release_expired

KINDS = (
    "gateway.webhooks.delivery.OUTBOX",
    "gateway.mail.sending.OUTBOX",
    "gateway.notifications.sending.OUTBOX",
    "gateway.sms.outbound.OUTBOX",
)
BATCH = 1000


def sweep_outbox(now=None):
    """Sweep every kind; returns how many wake-ups were enqueued in all."""
    now = now or utcnow()
    return sum(sweep_kind(import_string(path), now) for path in KINDS)


def sweep_kind(kind, now):
    """Return the kind's run-out leases, then wake its due rows, oldest due first, after the
    commit (a job never finds its row not yet there); each job's claim makes a repeat harmless."""
    release_expired(kind, now)
    c = kind.table.c
    due = []
    if kind.woken():
        due = db.session.execute(
            db.select(c.id, c.created_at, c.attempts)
            .where(*free_and_due(kind.table, now))
            .order_by(c.next_attempt_at)
            .limit(BATCH)
        ).all()
    db.session.commit()
    for row_id, created_at, attempts in due:
        jobs.enqueue(
            kind.queue, kind.job, row_id, unique=wake_key(kind, row_id, created_at, attempts)
        )
    return len(due)
