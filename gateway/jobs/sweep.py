"""The outbox sweep: wake every due piece of work again, whatever became of its job.

Each outbox's domain owns its waker, a function (now) → how many wake-ups it enqueued; this table
names them by dotted path, as PERIODIC names jobs, so the jobs package never imports a domain.
"""

from werkzeug.utils import import_string

from ..clock import utcnow

OUTBOX_WAKERS = (
    "gateway.webhooks.sweep.wake_due_deliveries",
    "gateway.sms.outbound_sweep.wake_due_messages",
)


def sweep_outbox(now=None):
    """Run every outbox's waker; returns how many wake-ups were enqueued in all."""
    now = now or utcnow()
    return sum(import_string(path)(now) for path in OUTBOX_WAKERS)
