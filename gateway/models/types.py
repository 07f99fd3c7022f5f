"""Column types: money as integer minor units, times as UTC."""
from datetime import timezone

from sqlalchemy import BigInteger, DateTime
from sqlalchemy.types import TypeDecorator

from ..money import from_cents, to_cents


class Money(TypeDecorator):
    """A Decimal amount stored exactly as integer minor units on every engine."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return None if value is None else to_cents(value)

    def process_result_value(self, value, dialect):
        return None if value is None else from_cents(value)


class UTCDateTime(TypeDecorator):
    """An aware UTC datetime, stored naive-in-UTC so SQLite and PostgreSQL agree."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        return None if value is None else value.replace(tzinfo=timezone.utc)
