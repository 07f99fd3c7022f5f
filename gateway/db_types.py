"""Column types: money as integer minor units, times as UTC; the values no column can take."""

import math
import re
from collections.abc import Mapping
from datetime import timezone

from sqlalchemy import BigInteger, DateTime
from sqlalchemy.types import TypeDecorator

from .money import from_cents, to_cents

UNSTORABLE_MESSAGE = "Must not contain NUL characters, unpaired surrogates, NaN or Infinity."
_UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")


def unstorable(value):
    """Whether a parsed JSON value holds text or a number no database column can take, keys
    included.
    """
    if isinstance(value, str):
        return _UNSTORABLE_TEXT.search(value) is not None
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(unstorable(key) or unstorable(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(unstorable(item) for item in value)
    return False


# Primary keys are INTEGER columns: PostgreSQL's int4 ends here, so a larger number names no row.
MAX_ROW_ID = 2**31 - 1


def row_id(value):
    """`value` as a primary key a row can have (ASCII digits, 1 .. MAX_ROW_ID), else None.

    Getters look ids up through this, so an id from a URL that no row can have reads as 404
    instead of reaching the database (SQLite overflows past 64 bits).
    """
    text = str(value)
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_ROW_ID)):
        return None
    number = int(text)
    return number if 1 <= number <= MAX_ROW_ID else None


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
