"""The one clock of the service: timezone-aware UTC that freezegun can stop."""

from datetime import datetime, timezone


def utcnow():
    """The current time as an aware UTC datetime."""
    return datetime.now(timezone.utc)


def isoformat(value):
    """A datetime as ISO 8601 with its UTC offset, or None."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.isoformat()
