"""Jinja filters of the panel: money in the currency's format, times in the brand's zone, both in
the page's digits.
"""

import re
from datetime import datetime, time, timezone
from decimal import Decimal
from types import SimpleNamespace

from babel.dates import format_date, format_datetime
from babel.numbers import format_decimal
from flask_login import current_user

from ..checkout.presenters import CURRENCY_SYMBOLS, KIND_NAMES
from ..i18n import lazy_gettext as _l
from ..numerals import clock_style, grouped_number, money_pattern, native_digits, page_locale
from ..payments import methods
from ..payments.dashboard import brand_zone
from ..states import (
    PAYMENT_CANCELLED,
    PAYMENT_COMPLETED,
    PAYMENT_CREATED,
    PAYMENT_EXPIRED,
    PAYMENT_FAILED,
    PAYMENT_PARTIALLY_REFUNDED,
    PAYMENT_PROCESSING,
    PAYMENT_REFUNDED,
)
from .audit_names import audit_action, audit_detail

# Every form's phone field shows this one example (international format, which every one accepts).
PHONE_PLACEHOLDER = "+8801712345678"

STATUS_NAMES = {
    PAYMENT_CREATED: _l("Created"),
    PAYMENT_PROCESSING: _l("Processing"),
    PAYMENT_COMPLETED: _l("Completed"),
    PAYMENT_PARTIALLY_REFUNDED: _l("Partly refunded"),
    PAYMENT_REFUNDED: _l("Refunded"),
    PAYMENT_CANCELLED: _l("Cancelled"),
    PAYMENT_EXPIRED: _l("Expired"),
    PAYMENT_FAILED: _l("Failed"),
    "review": _l("In review"),
    "pending": _l("Pending"),
    "retrying": _l("Retrying"),
    "success": _l("Delivered"),
}


def money(amount, currency="BDT"):
    """An amount as the merchant reads it: ৳ 1,250.00, $ 12.50 (৳ ১,২৫০.০০ in Bangla), or the
    currency's code.
    """
    if amount is None:
        return "—"
    text = native_digits(format_decimal(Decimal(amount), money_pattern(), locale="en"))
    return f"{CURRENCY_SYMBOLS.get(currency, currency)} {text}"


def number(value):
    """A count or a rate in the page's digits, grouped: 1,250 or ১,২৫০; a dash for None; other text
    as it came.
    """
    if value is None:
        return "—"
    if not isinstance(value, (int, float, Decimal)):  # e.g. a phone-reported status field
        return native_digits(value)
    return grouped_number(value)


def current_zone():
    """The signed-in user's brand time zone (DEFAULT_TIMEZONE before sign-in)."""
    brand = current_user.brand if getattr(current_user, "is_authenticated", False) else None
    return brand_zone(brand or SimpleNamespace(timezone=None))


def percent(value):
    """A rate in the page's digits, e.g. 97.5 % (৯৭.৫ % in Bangla); a dash for None."""
    return "—" if value is None else f"{grouped_number(value)} %"


def local_datetime(moment, style="d MMM y, HH:mm"):
    """A UTC datetime in the brand's zone and the page's language, e.g. 2 Jan 2025, 00:30."""
    if moment is None:
        return "—"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return native_digits(
        format_datetime(moment, clock_style(style), tzinfo=current_zone(), locale=page_locale())
    )


def local_date(value, style="d MMM"):
    """A calendar date (or a datetime's local date) in the page's language."""
    if value is None:
        return "—"
    if isinstance(value, datetime):
        value = value.astimezone(current_zone()).date()
    return native_digits(format_date(value, style, locale=page_locale()))


ISO_MOMENT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


def audit_value(value):
    """A value an audit entry recorded, as the panel shows it: a time written in ISO format as a
    local time (2 Jan 2025, 00:30), nothing as a dash, anything else as it was."""
    if value is None:
        return "—"
    if isinstance(value, str) and ISO_MOMENT.match(value):
        try:
            return local_datetime(datetime.fromisoformat(value))
        except ValueError:
            return value
    return value


def provider_name(provider):
    """A provider as it writes its own name (bKash), or a dash when none."""
    return methods.provider_name(provider) if provider else "—"


def kind_name(kind):
    """A receiving account's kind (personal, agent, merchant) in the page's language."""
    return KIND_NAMES.get(kind, (kind or "").capitalize())


def status_name(status):
    """A status as the merchant reads it, in the page's language."""
    return STATUS_NAMES.get(status, (status or "").replace("_", " ").capitalize())


def day_bounds(day_from, day_to):
    """Local calendar dates as an aware UTC [start, end] range for filtering (either may be
    None)."""
    zone = current_zone()
    start = (
        datetime.combine(day_from, time.min, tzinfo=zone).astimezone(timezone.utc)
        if day_from
        else None
    )
    end = (
        datetime.combine(day_to, time.max, tzinfo=zone).astimezone(timezone.utc) if day_to else None
    )
    return start, end


def register_filters(state):
    """Install the filters (and the phone fields' placeholder) on the application the panel
    blueprint joins."""
    state.app.jinja_env.globals["phone_placeholder"] = PHONE_PLACEHOLDER
    state.app.jinja_env.filters.update(
        money=money,
        local_datetime=local_datetime,
        local_date=local_date,
        status_name=status_name,
        provider_name=provider_name,
        number=number,
        percent=percent,
        kind_name=kind_name,
        audit_action=audit_action,
        audit_detail=audit_detail,
        audit_value=audit_value,
    )
