"""The dashboard summary: counts, volumes, success rate, today and 30 days, aggregated in SQL."""

from datetime import datetime, time, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import current_app

from ..clock import utcnow
from ..db_types import Money
from ..extensions import db
from ..money import CENT
from .models.payment import PAID_STATUSES, PAYMENT_STATUSES, Payment, Transaction

SERIES_DAYS = 30

# What the merchant keeps of a paid payment, in its currency: its amount less what was refunded of
# it. A refund may return the method fee too (brands.refund_fee), so `amount_refunded` can pass the
# amount by the fee; the fee was never part of the amount, so only up to the amount comes off it.
NET_PAID = db.type_coerce(
    Payment.amount
    - db.case(
        (Payment.amount_refunded < Payment.amount, Payment.amount_refunded),
        else_=Payment.amount,
    ),
    Money,
)


def dashboard_summary(brand, now=None, livemode=True):
    """Everything the merchant's dashboard shows, as plain values for the schema to render: of the
    live payments only, or of the test ones only with `livemode=False` (never both)."""
    now = now or utcnow()
    zone = brand_zone(brand)
    counts = status_counts(brand, livemode=livemode)
    total = sum(counts.values())
    paid = sum(counts[status] for status in PAID_STATUSES)
    completed, refunded, net = paid_volumes(brand, livemode)
    daily = daily_series(brand, zone, now, livemode)
    _, starts, end = local_days(zone, now)
    return {
        "timezone": zone.key,
        "generated_at": now,
        "counts": counts,
        "total_count": total,
        "completed_volume": completed,
        "refunded_volume": refunded,
        "net_volume": net,
        "success_rate": rate(paid, total),
        "windows": {
            "today": status_window(brand, starts[-1], end, livemode),
            "last_30_days": status_window(brand, starts[0], end, livemode),
        },
        "today": daily[-1],
        "daily": daily,
        "livemode": bool(livemode),
    }


def brand_zone(brand):
    """The brand's time zone, falling back to DEFAULT_TIMEZONE (Asia/Dhaka) when unset or
    unknown."""
    default = current_app.config.get("DEFAULT_TIMEZONE", "Asia/Dhaka")
    try:
        return ZoneInfo(brand.timezone or default)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo(default)


def zeroed(brand):
    """A per-currency dict holding 0.00 for each currency the brand accepts."""
    return {currency: Decimal("0.00") for currency in brand.currency_list}


def rate(paid, total):
    """Paid payments as a percentage of all, two decimals; None when there are none."""
    return (Decimal(paid * 100) / total).quantize(CENT) if total else None


def status_window(brand, since, until, livemode=True):
    """Counts by status, total and success rate of the payments of one mode created in
    [since, until)."""
    counts = status_counts(brand, since, until, livemode)
    total = sum(counts.values())
    return {
        "counts": counts,
        "total_count": total,
        "success_rate": rate(sum(counts[status] for status in PAID_STATUSES), total),
    }


def status_counts(brand, since=None, until=None, livemode=True):
    """Number of the brand's payments of one mode in each status (every status present, zeros
    included), optionally only those created in [since, until)."""
    query = db.select(Payment.status, db.func.count()).where(
        Payment.brand_id == brand.id, Payment.livemode == bool(livemode)
    )
    if since is not None:
        query = query.where(Payment.created_at >= since, Payment.created_at < until)
    rows = db.session.execute(query.group_by(Payment.status)).all()
    counts = dict.fromkeys(PAYMENT_STATUSES, 0)
    counts.update({status: count for status, count in rows})
    return counts


def paid_volumes(brand, livemode=True):
    """Gross paid, refunded (the money returned, fees included) and net (NET_PAID) amounts per
    currency over every paid payment of one mode."""
    rows = db.session.execute(
        db.select(
            Payment.currency,
            db.func.sum(Payment.amount),
            db.func.sum(Payment.amount_refunded),
            db.func.sum(NET_PAID),
        )
        .where(
            Payment.brand_id == brand.id,
            Payment.livemode == bool(livemode),
            Payment.status.in_(PAID_STATUSES),
        )
        .group_by(Payment.currency)
    ).all()
    completed, refunded, net = zeroed(brand), zeroed(brand), zeroed(brand)
    for currency, amount, amount_refunded, kept in rows:
        completed[currency] = amount
        refunded[currency] = amount_refunded
        net[currency] = kept
    return completed, refunded, net


def local_days(zone, now, days=SERIES_DAYS):
    """The last `days` local dates (oldest first), the UTC instant each begins, and when today
    ends."""
    today = now.astimezone(zone).date()
    dates = [today - timedelta(days=back) for back in range(days - 1, -1, -1)]
    starts = [
        datetime.combine(day, time.min, tzinfo=zone).astimezone(timezone.utc) for day in dates
    ]
    end = datetime.combine(today + timedelta(days=1), time.min, tzinfo=zone).astimezone(
        timezone.utc
    )
    return dates, starts, end


def daily_series(brand, zone, now, livemode=True):
    """Completed payments of one mode (count, gross volume per currency) per local day, by
    completion time."""
    dates, starts, end = local_days(zone, now)
    # Day boundaries are local midnights converted to UTC in Python, so bucketing is the same on
    # every engine and for every zone; the WHERE is a range on (brand_id, created_at), an index.
    bounds = starts[1:] + [end]
    day = db.case(*[(Transaction.created_at < bound, index) for index, bound in enumerate(bounds)])
    window = (
        db.select(day.label("day"), Transaction.currency, Transaction.amount)
        .join(Payment, Payment.id == Transaction.payment_id)
        .where(
            Transaction.brand_id == brand.id,
            Payment.livemode == bool(livemode),
            Transaction.created_at >= starts[0],
            Transaction.created_at < end,
        )
        .subquery()
    )
    rows = db.session.execute(
        db.select(
            window.c.day, window.c.currency, db.func.count(), db.func.sum(window.c.amount)
        ).group_by(window.c.day, window.c.currency)
    ).all()
    series = [{"date": date, "count": 0, "volume": zeroed(brand)} for date in dates]
    for index, currency, count, volume in rows:
        series[index]["count"] += count
        series[index]["volume"][currency] = volume
    return series
