"""The dashboard: today, the last 30 days, the review queue, unclaimed texts and the companion
phone's pulse.
"""

from datetime import datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from flask import redirect, render_template, url_for
from flask_babel import gettext as _

from ..clock import utcnow
from ..devices.brand_devices import brand_phones
from ..devices.models.device import Device
from ..extensions import db
from ..notifications.settings import settings_for
from ..payments.dashboard import dashboard_summary
from ..payments.lifecycle import list_payments_query
from ..payments.models.payment import Payment, Refund, Transaction
from ..sms.chain_gaps import open_gaps
from ..sms.models.inbound_sms import InboundSms
from ..sms.review import needs_review
from ..states import PAYMENT_PROCESSING, SMS_UNMATCHED
from . import bp
from .access import VIEW, current_brand, panel_livemode, public, requires
from .charts import daily_bars
from .formatting import local_date, money, number

HEARTBEAT_FRESH = timedelta(minutes=15)
RECENT = 6
WAITING_SHOWN = 3


def review_queue(brand):
    """Payments waiting for the merchant: held with a review reason, or with money that came after
    cancel or expiry.
    """
    return db.session.execute(
        db.select(db.func.count())
        .select_from(Payment)
        .where(Payment.brand_id == brand.id, Payment.livemode == panel_livemode(), needs_review())
    ).scalar_one()


def texts_waiting_for_claim(brand):
    """How many credits the phone forwarded that no payment has claimed yet, and the latest few of
    them.
    """
    waiting = (
        InboundSms.brand_id == brand.id,
        InboundSms.livemode == panel_livemode(),
        InboundSms.status == SMS_UNMATCHED,
        InboundSms.payment_id.is_(None),
    )
    count = db.session.execute(
        db.select(db.func.count()).select_from(InboundSms).where(*waiting)
    ).scalar_one()
    latest = (
        db.session.execute(
            db.select(InboundSms)
            .where(*waiting)
            .order_by(InboundSms.created_at.desc(), InboundSms.id.desc())
            .limit(WAITING_SHOWN)
        )
        .scalars()
        .all()
        if count
        else []
    )
    return {"count": count, "latest": latest}


def last_heartbeat(brand):
    """When a paired (not revoked) phone of the brand last checked in, or None."""
    return db.session.execute(
        db.select(db.func.max(Device.last_heartbeat_at)).where(*brand_phones(brand.id))
    ).scalar_one()


def phone_state(heartbeat, now, fresh=HEARTBEAT_FRESH):
    """ "online" within `fresh` of a heartbeat (the brand's offline limit), "stale" (offline) after,
    "never" without one."""
    if heartbeat is None:
        return "never"
    return "online" if now - heartbeat <= fresh else "stale"


def waiting_for_sms(brand, now, minutes):
    """Payments whose customer submitted a TrxID over `minutes` ago and whose SMS has not come: how
    many, and the longest wait in minutes. Held-for-review ones are counted by the review queue."""
    count, oldest = db.session.execute(
        db.select(db.func.count(), db.func.min(Payment.claimed_at)).where(
            Payment.brand_id == brand.id,
            Payment.livemode == panel_livemode(),
            Payment.status == PAYMENT_PROCESSING,
            Payment.review_reason.is_(None),
            Payment.claimed_at.is_not(None),
            Payment.claimed_at <= now - timedelta(minutes=minutes),
        )
    ).one()
    longest = int((now - oldest).total_seconds() // 60) if oldest is not None else 0
    return {"count": count, "minutes": minutes, "longest": longest}


def refunds_since(brand, since):
    """Refunded amounts per currency and the number of refunds made since a moment."""
    rows = db.session.execute(
        db.select(Transaction.currency, db.func.count(Refund.id), db.func.sum(Refund.amount))
        .join(Transaction, Refund.transaction_id == Transaction.id)
        .where(
            Refund.brand_id == brand.id,
            Refund.livemode == panel_livemode(),
            Refund.created_at >= since,
        )
        .group_by(Transaction.currency)
    ).all()
    return {"count": sum(row[1] for row in rows), "volume": {row[0]: row[2] for row in rows}}


def window_totals(daily, currencies):
    """Completed count and volume per currency over the days of the series."""
    return {
        "count": sum(day["count"] for day in daily),
        "volume": {
            currency: sum(day["volume"].get(currency, 0) for day in daily)
            for currency in currencies
        },
    }


def chart_for(summary, currency):
    """The 30-day SVG chart of completed volume in the brand's first currency."""
    days = [
        {
            "label": local_date(day["date"]),
            "value": day["volume"].get(currency, 0),
            "count": number(day["count"]),
            "value_text": money(day["volume"].get(currency, 0), currency),
        }
        for day in summary["daily"]
    ]
    return daily_bars(
        days,
        _("Completed payments per day, last 30 days (%(currency)s)", currency=currency),
        _("Volume"),
        _("Day"),
    )


def local_midnight(day, zone_name):
    """The UTC instant a local date begins."""
    return datetime.combine(day, time.min, tzinfo=ZoneInfo(zone_name)).astimezone(timezone.utc)


@bp.get("/")
@public
def home():
    """/panel itself opens the dashboard."""
    return redirect(url_for("panel.dashboard"))


@bp.get("/dashboard")
@requires(VIEW)
def dashboard():
    """Today and the last 30 days at a glance."""
    brand, now = current_brand(), utcnow()
    alerts = settings_for(brand.id)
    summary = dashboard_summary(brand, now, panel_livemode())
    currency = brand.currency_list[0] if brand.currency_list else "BDT"
    daily, heartbeat = summary["daily"], last_heartbeat(brand)
    recent = (
        db.session.execute(list_payments_query(brand, {}, panel_livemode()).limit(RECENT))
        .scalars()
        .all()
    )
    return render_template(
        "panel/dashboard.html",
        summary=summary,
        currency=currency,
        recent=recent,
        month=window_totals(daily, brand.currency_list),
        review_count=review_queue(brand),
        waiting_texts=texts_waiting_for_claim(brand),
        heartbeat=heartbeat,
        phone=phone_state(heartbeat, now, timedelta(minutes=alerts.offline_minutes)),
        waiting_sms=waiting_for_sms(brand, now, alerts.waiting_minutes),
        gaps=open_gaps(brand.id),
        chart=chart_for(summary, currency),
        refunds_today=refunds_since(brand, local_midnight(daily[-1]["date"], summary["timezone"])),
        refunds_month=refunds_since(brand, local_midnight(daily[0]["date"], summary["timezone"])),
    )
