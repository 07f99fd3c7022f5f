"""The retry schedule type: how long after each failed attempt the next one is made."""

from dataclasses import dataclass
from datetime import timedelta

from flask import current_app, has_app_context

# The webhooks' backoff (docs/spec/CONTRACT.md: 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h); e-mail
# and notifications take its first five steps.
BACKOFF = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=6),
    timedelta(hours=12),
    timedelta(hours=24),
)


@dataclass(frozen=True)
class RetrySchedule:
    """`delays[n - 1]` follows failed attempt n; after the last delay's attempt the row fails.

    `scale_setting` names a config key that multiplies every delay (tests shrink them).
    """

    delays: tuple[timedelta, ...]
    scale_setting: str | None = None

    @property
    def max_attempts(self):
        """Attempts made in all before the row is failed for good."""
        return len(self.delays) + 1

    def exhausted(self, attempts):
        """Whether `attempts` automatic attempts used the whole schedule."""
        return attempts >= self.max_attempts

    def delay(self, attempts):
        """How long after attempt number `attempts` (1-based) the next one is made."""
        scale = 1
        if self.scale_setting and has_app_context():
            scale = current_app.config.get(self.scale_setting, 1)
        return self.delays[max(attempts, 1) - 1] * scale
