"""Numbers and clock times as the page's language writes them: Bangla digits and day periods on bn
pages.
"""

from babel.dates import format_time
from babel.numbers import format_decimal
from flask_babel import get_locale

BANGLA_DIGITS = str.maketrans("0123456789", "০১২৩৪৫৬৭৮৯")
# Bangla readers group by lakh and crore (12,34,567.00); English by thousands.
LAKH_GROUPING = "#,##,##0"
MONEY_PATTERNS = {"bn": LAKH_GROUPING + ".00"}
# A clock time in Bangla says the part of the day (সকাল, দুপুর, রাত) in words, never "AM"/"PM".
CLOCK_PATTERNS = {"bn": ("HH:mm", "B h:mm")}


def page_locale():
    """The page's language code for Babel (en or bn)."""
    return str(get_locale() or "en")


def native_digits(text, locale=None):
    """Text with its digits in the language's own script (০-৯ in Bangla)."""
    return str(text).translate(BANGLA_DIGITS) if (locale or page_locale()) == "bn" else str(text)


def grouped_number(value, locale=None):
    """A count or a rate, grouped, its decimals kept, in the page's digits: 1,250,000 or
    ১২,৫০,০০০."""
    if (locale or page_locale()) != "bn":
        return f"{value:,}"
    whole, dot, fraction = str(value).partition(".")
    return native_digits(
        format_decimal(int(whole), LAKH_GROUPING, locale="en") + dot + fraction, "bn"
    )


def money_pattern(locale=None):
    """Babel's pattern for a two-decimal amount in the language's grouping."""
    return MONEY_PATTERNS.get(locale or page_locale(), "#,##0.00")


def clock_style(style, locale=None):
    """A date/time pattern with the 24-hour clock said the language's way (bn: বিকাল ৩:৩০)."""
    old, new = CLOCK_PATTERNS.get(locale or page_locale(), ("", ""))
    return style.replace(old, new) if old else style


def clock_time(moment, zone, locale=None):
    """A clock time in a zone, e.g. 2:35 PM, or দুপুর ২:৩৫ in Bangla."""
    locale = locale or page_locale()
    if locale == "bn":
        return native_digits(format_time(moment, "B h:mm", tzinfo=zone, locale=locale), locale)
    return format_time(moment, "short", tzinfo=zone, locale=locale)
