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
    """Return every kind's run-out leases and read its due rows, oldest due first, in one
    transaction; after its commit (a job never finds its row not yet there) wake each row. A job's
    own claim makes a repeat harmless. Returns how many wake-ups were enqueued."""
    now = now or utcnow()
    wakes = []
    for kind in map(import_string, KINDS):
        release_expired(kind, now)
        if kind.woken():
            wakes += [(kind, row) for row in due_rows(kind, now)]
    db.session.commit()
    for kind, (row_id, created_at, attempts) in wakes:
        jobs.enqueue(
            kind.queue, kind.job, row_id, unique=wake_key(kind, row_id, created_at, attempts)
        )
    return len(wakes)


def due_rows(kind, now):
    """(id, created_at, attempts) of the kind's rows due now that no live attempt holds."""
    c = kind.table.c
    return db.session.execute(
        db.select(c.id, c.created_at, c.attempts)
        .where(*free_and_due(kind.table, now))
        .order_by(c.next_attempt_at)
        .limit(BATCH)
    ).all()
