"""What the outbox knows of each kind of row it sends: its table, job, schedule and lease."""

from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

from ..states import Machine
from .schedule import RetrySchedule


@dataclass(frozen=True)
class OutboxKind:
    """One outbox table and how its rows are sent.

    `job(row_id)` (a dotted path, run by gateway.jobs) makes one attempt. `exhausted(table)` is the
    SQL for "no automatic attempt left" (default: attempts ≥ the schedule's). `on_expired(row_id,
    lease, failed)` runs after the sweep returned a lease that ran out (webhooks log the attempt).
    `woken()` says whether due rows are woken at all (outbound SMS: only when a provider sends).
    """

    name: str
    machine: Machine
    queue: str
    job: str
    schedule: RetrySchedule
    expired_error: str
    lease: timedelta | None = None  # what take_lease holds a row for
    exhausted: Callable | None = None
    on_expired: Callable | None = None
    woken: Callable[[], bool] = lambda: True

    @property
    def table(self):
        """The outbox table this kind's rows live in."""
        return self.machine.table

    def exhausted_sql(self):
        """SQL: the row has used its automatic attempts."""
        if self.exhausted is not None:
            return self.exhausted(self.table)
        return self.table.c.attempts >= self.schedule.max_attempts


def wake_key(kind, row_id, created_at, attempts):
    """The dedupe key of a wake-up for a row's attempt after `attempts` (the creation time tells
    apart two rows with the same id, before and after a database restore)."""
    return f"{kind.name}:{row_id}:{created_at:%Y%m%d%H%M%S%f}:{attempts}"
