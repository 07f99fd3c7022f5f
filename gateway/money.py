"""The one money type: Decimal with two places, parsed strictly, printed as a string."""

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
# ASCII digits only, the whole value: `\d` would take Bangla or full-width digits, `$` a trailing
# newline.
AMOUNT_PATTERN = re.compile(r"[0-9]{1,12}(\.[0-9]{1,2})?")
# The same rule in an OpenAPI document (ECMA-262 patterns search, so both ends are anchored).
AMOUNT_SCHEMA_PATTERN = r"^[0-9]{1,12}(\.[0-9]{1,2})?$"


class InvalidAmount(ValueError):
    """Raised when a value is not a well-formed positive amount."""


def parse_amount(value):
    """A Decimal from an API value ("500", "500.5", "500.50" or a JSON number)."""
    if isinstance(value, bool):
        raise InvalidAmount('Amount must be a decimal string such as "500.00".')
    if isinstance(value, (int, float)):
        value = repr(value) if isinstance(value, float) else str(value)
    if not isinstance(value, str) or not AMOUNT_PATTERN.fullmatch(value):
        raise InvalidAmount(
            'Amount must be a decimal string with at most two decimals, such as "500.00".'
        )
    try:
        return Decimal(value).quantize(CENT)
    except InvalidOperation as error:  # pragma: no cover - the pattern already excludes these
        raise InvalidAmount("Amount is not a number.") from error


def to_cents(amount):
    """Integer minor units of a Decimal amount."""
    return int((Decimal(amount) * 100).to_integral_value(rounding=ROUND_HALF_UP))


def from_cents(cents):
    """A two-place Decimal from integer minor units."""
    return (Decimal(int(cents)) / 100).quantize(CENT)


def format_amount(amount):
    """The API's string form of an amount: exactly two decimals."""
    if amount is None:
        return None
    return str(Decimal(amount).quantize(CENT))


def plain_decimal(value):
    """A decimal as people write it (an exchange rate): 121.5, not 121.500000; 100, not 1E+2; None
    for None."""
    return None if value is None else format(Decimal(value).normalize(), "f")
