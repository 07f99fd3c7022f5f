"""A paired phone's own view: heartbeats, unpairing and its dashboard."""

from datetime import datetime
from decimal import Decimal

from ..answer_commit import commit_work
from ..clock import isoformat, utcnow
from ..devices.notifications import count_pending
from ..devices.tokens import revoke_device
from ..domain_errors import invalid_state, not_found
from ..extensions import db
from ..notifications.events import phone_heard_from
from ..payments.dashboard import brand_zone, daily_series, local_days, status_window
from ..payments.models.payment import OPEN_STATUSES, Payment
from ..payments.transactions import list_transactions_query
from ..sms.filter_rules import filter_rules
from ..sms.models.inbound_sms import InboundSms
from ..sms.models.outbound_sms import OutboundSms
from ..sms.outbound import get_outbound_sms, report_outbound_sms
from ..states import (
    PAYMENT_PROCESSING,
    SMS_DUPLICATE,
    SMS_IGNORED,
    SMS_MATCHED,
    SMS_REVIEW,
    SMS_UNMATCHED,
    SMS_UNPARSED,
)

HEARTBEAT_SECONDS = 300
RECENT_TRANSACTIONS = 10
SMS_COUNTED = (SMS_MATCHED, SMS_UNMATCHED, SMS_REVIEW, SMS_IGNORED, SMS_DUPLICATE, SMS_UNPARSED)


def record_heartbeat(device, data):
    """Store what the phone reports about itself and tell it what changed on the server."""
    now = utcnow()
    status = {
        key: isoformat(value) if isinstance(value, datetime) else value
        for key, value in data.items()
    }
    device.status_json = status
    phone_heard_from(device, device.last_heartbeat_at)
    device.last_heartbeat_at = now
    if data.get("app_version"):
        device.app_version = data["app_version"]
    commit_work()
    return {
        "server_time": now,
        "next_heartbeat_seconds": HEARTBEAT_SECONDS,
        "filter_rules_version": filter_rules(device.brand)["version"],
        "pending_notifications": count_pending(device),
    }


def record_ping(device, health=None):
    """A forwarder's ping (SMS Gateway's `system:ping`): the phone is alive, like a heartbeat."""
    phone_heard_from(device, device.last_heartbeat_at)
    device.last_heartbeat_at = utcnow()
    if isinstance(health, dict):
        device.status_json = {"health": health}
    commit_work()


def unpair_device(device, ref):
    """The app unpairs itself (`self` or its own uuid); other devices are not its business."""
    if ref not in ("self", device.uuid):
        raise not_found("device")
    revoke_device(device, "unpaired by the app")
    return {"id": device.uuid, "deleted": True}


def report_leased_sms(device, message_id, status, error=None):
    """A device reports an outbound message it leased; another device's lease is not its to
    report."""
    message = get_outbound_sms(device.brand, message_id, livemode=None)  # it sends both modes
    if message.leased and message.leased_by != device.uuid:
        raise invalid_state("This message is leased to another device.")
    return report_outbound_sms(device.brand, message.id, status, error)


def today_figures(brand, now):
    """Today from the brand's local midnight: revenue in its first currency, payments completed,
    created, and still open; the payments domain's dashboard figures."""
    zone = brand_zone(brand)
    (date,), (since,), until = local_days(zone, now, days=1)
    completed = daily_series(brand, zone, now)[-1]
    created = status_window(brand, since, until)
    currency = brand.currency_list[0]
    return {
        "date": date,
        "currency": currency,
        "revenue": completed["volume"].get(currency, Decimal("0.00")),
        "completed": completed["count"],
        "total": created["total_count"],
        "pending": sum(created["counts"][status] for status in OPEN_STATUSES),
        "volume": completed["volume"],
    }


def device_dashboard(device):
    """OwnPay Console's dashboard (today, recent transactions, unread notifications), today's SMS by
    status, payments waiting for an SMS, and the phone's own state."""
    now = utcnow()
    brand = device.brand
    today = today_figures(brand, now)
    since = local_days(brand_zone(brand), now, days=1)[1][0]
    by_status = dict(
        db.session.execute(
            db.select(InboundSms.status, db.func.count())
            .where(
                InboundSms.brand_id == device.brand_id,
                InboundSms.livemode.is_(True),
                InboundSms.created_at >= since,
            )
            .group_by(InboundSms.status)
        ).all()
    )
    waiting = db.session.execute(
        db.select(db.func.count())
        .select_from(Payment)
        .where(
            Payment.brand_id == device.brand_id,
            Payment.livemode.is_(True),  # the phone waits for real money only
            Payment.status == PAYMENT_PROCESSING,
        )
    ).scalar_one()
    unread = count_pending(device)
    return {
        "today": today,
        "recent_transactions": db.session.execute(
            list_transactions_query(brand, {}).limit(RECENT_TRANSACTIONS)
        )
        .scalars()
        .all(),
        "unread_notifications": unread,
        "device": device,
        "brand": brand,
        "sms_today": {
            "received": sum(by_status.values()),
            **{s: by_status.get(s, 0) for s in SMS_COUNTED},
        },
        "payments": {
            "awaiting_sms": waiting,
            "completed_today": today["completed"],
            # One currency's money: adding taka to dollars makes no figure anyone can use.
            "completed_today_amount": today["revenue"],
        },
        "outbound_queued": db.session.execute(
            db.select(db.func.count())
            .select_from(OutboundSms)
            .where(
                OutboundSms.brand_id == device.brand_id, OutboundSms.shown_status_sql() == "queued"
            )
        ).scalar_one(),
        "pending_notifications": unread,
        "server_time": now,
    }
