"""The time a text prints, read on the brand's wall clock: the wallet's own time for what the text
tells, where the phone's arrival time is only as good as the phone's clock."""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

MONTHS = {m: i for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split(), 1)}
PRINTED = re.compile(
    r"(?P<d>\d{1,2})[-/.](?P<m>\d{1,2}|[A-Za-z]{3})[-/.](?P<y>\d{2,4})"
    r"(?:\s*(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?\s*(?:(?P<ap>[AaPp])\.?[Mm]\b)?)?"
)


def local_now(moment, brand_timezone):
    """A UTC moment as the brand's naive wall-clock time, the scale texts print their times in."""
    try:
        zone = ZoneInfo(brand_timezone or "Asia/Dhaka")
    except (KeyError, ValueError):
        zone = ZoneInfo("Asia/Dhaka")
    return moment.astimezone(zone).replace(tzinfo=None, microsecond=0)


def printed_day_and_time(printed):
    """(the printed day, the printed wall-clock time or None for a date alone), or None when no
    date can be read."""
    match = PRINTED.search(printed or "")
    if not match:
        return None
    try:
        month = match["m"]
        month = MONTHS[month.upper()] if month.isalpha() else int(month)
        year = int(match["y"]) + (2000 if len(match["y"]) == 2 else 0)
        day = datetime(year, month, int(match["d"]))
        if match["H"] is None:
            return day, None
        hour = int(match["H"])
        if match["ap"]:
            hour = hour % 12 + (12 if match["ap"].lower() == "p" else 0)
        return day, day.replace(hour=hour, minute=int(match["M"]), second=int(match["S"] or 0))
    except (KeyError, ValueError):
        return None


def printed_datetime(printed, received_at, brand_timezone):
    """The printed time as a naive local datetime; the phone's arrival time when none can be
    read."""
    arrived = local_now(received_at, brand_timezone)
    read = printed_day_and_time(printed)
    if read is None:
        return arrived
    day, moment = read
    if moment is None:
        # A date alone (bank alerts): its arrival time when it came that day, else the day's start.
        return arrived if arrived.date() == day.date() else day
    return moment
