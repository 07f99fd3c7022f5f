"""A payment method's fee passed to the customer: one rule, validated on the way in.

The rule (docs/methods.md): fee = fee_fixed + fee_percent % of the taka amount, then raised
to fee_min and lowered to fee_max when they are set, then rounded UP to the paisa (ROUND_CEILING):
the customer never sends less than the method's cost, and every part is Decimal.
"""

from decimal import ROUND_CEILING, Decimal, InvalidOperation

from ..domain_errors import field_error
from ..money import AMOUNT_PATTERN, CENT

ZERO = Decimal("0.00")
HUNDRED = Decimal("100")
# A percent with at most three decimals (1.85, 0.125), 0 to 100.
PERCENT_PLACES = Decimal("0.001")
FEE_FIELDS = ("fee_fixed", "fee_percent", "fee_min", "fee_max")
LABELS = {"fee_fixed": "The fixed fee", "fee_min": "The minimum fee", "fee_max": "The maximum fee"}


def fee_for(method, amount_bdt):
    """The fee, in taka, a customer paying `amount_bdt` through `method` adds; 0.00 when the
    amount is unknown (another currency without a rate: no SMS can pay it) or the method has no fee.
    """
    if amount_bdt is None or method is None:
        return ZERO
    percent = Decimal(method.fee_percent or 0)
    fee = Decimal(method.fee_fixed or 0) + Decimal(amount_bdt) * percent / HUNDRED
    if method.fee_min is not None:
        fee = max(fee, Decimal(method.fee_min))
    if method.fee_max is not None:
        fee = min(fee, Decimal(method.fee_max))
    return fee.quantize(CENT, rounding=ROUND_CEILING)


def checked_fee_amount(name, value):
    """A taka part of the fee (fee_fixed, fee_min, fee_max): a Decimal of zero or more with at most
    two decimals; None for an empty optional bound; ValidationFailed naming `name` otherwise."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if name == "fee_fixed":
            return ZERO
        return None
    text = str(value).strip()
    if text.startswith("-"):
        raise field_error(name, f"{label(name)} cannot be negative.")
    if isinstance(value, bool) or not AMOUNT_PATTERN.fullmatch(text):
        raise field_error(name, f"{label(name)} must be an amount in taka such as 10 or 10.50.")
    return Decimal(text).quantize(CENT)


def checked_percent(value):
    """fee_percent: a Decimal from 0 to 100 with at most three decimals (empty: 0)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return Decimal("0.000")
    text = str(value).strip()
    try:
        percent = Decimal(text)
    except InvalidOperation:
        percent = None
    if isinstance(value, bool) or percent is None or not percent.is_finite():
        raise field_error("fee_percent", "The fee percent must be a number such as 1.85.")
    if percent < 0:
        raise field_error("fee_percent", "The fee percent cannot be negative.")
    if percent > HUNDRED:
        raise field_error("fee_percent", "The fee percent cannot be over 100.")
    if percent != percent.quantize(PERCENT_PLACES):
        raise field_error("fee_percent", "The fee percent takes at most three decimals.")
    return percent.quantize(PERCENT_PLACES)


def checked_fee(changes, current=None):
    """The fee fields present in `changes`, cleaned; `current` (a method) fills the others for the
    check that the minimum is not above the maximum."""
    cleaned = {}
    for name in FEE_FIELDS:
        if name in changes:
            value = changes[name]
            cleaned[name] = (
                checked_percent(value) if name == "fee_percent" else checked_fee_amount(name, value)
            )
    low = cleaned["fee_min"] if "fee_min" in cleaned else getattr(current, "fee_min", None)
    high = cleaned["fee_max"] if "fee_max" in cleaned else getattr(current, "fee_max", None)
    if low is not None and high is not None and low > high:
        raise field_error(
            "fee_min" if "fee_min" in cleaned else "fee_max",
            f"The minimum fee ({low}) cannot be above the maximum fee ({high}).",
        )
    return cleaned


def label(name):
    """How an error names a taka part of the fee."""
    return LABELS[name]


def describe_fee(method):
    """The fee in one plain line (CLI, docs): "৳10.00 + 1.85% (min ৳5.00, max ৳50.00)"; "no fee"."""
    fixed, percent = Decimal(method.fee_fixed or 0), Decimal(method.fee_percent or 0)
    if not fixed and not percent and method.fee_min is None:
        return "no fee"
    parts = [f"{fixed:.2f}"] if fixed else []
    if percent:
        parts.append(f"{percent.normalize():f}%")
    bounds = [f"min {Decimal(method.fee_min):.2f}"] if method.fee_min is not None else []
    if method.fee_max is not None:
        bounds.append(f"max {Decimal(method.fee_max):.2f}")
    return " + ".join(parts or ["0.00"]) + (f" ({', '.join(bounds)})" if bounds else "")


EXAMPLE_AMOUNT = Decimal("1000.00")


def fee_example(method, amount=EXAMPLE_AMOUNT):
    """(amount, fee, what the customer sends) for an example taka amount: the panel's worked
    example of a method's fee ("On ৳1,000.00 the customer sends ৳1,018.50")."""
    fee = fee_for(method, amount)
    return amount, fee, amount + fee
