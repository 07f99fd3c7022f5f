"""A paired phone's own view: heartbeats, unpairing and its dashboard."""

from datetime import datetime, time
from zoneinfo import ZoneInfo

from ..answer_commit import commit_work
from ..clock import isoformat, utcnow
from ..devices.notifications import count_pending
from ..devices.tokens import revoke_device
from ..domain_errors import invalid_state, not_found
from ..extensions import db
from ..money import format_amount
from ..notifications.events import phone_heard_from
from ..payments.models.payment import Payment, Transaction
from ..sms.filter_rules import filter_rules
from ..sms.models.inbound_sms import InboundSms
from ..sms.models.outbound_sms import OutboundSms
from ..sms.outbound import get_outbound_sms, report_outbound_sms

HEARTBEAT_SECONDS = 300
SMS_COUNTED = ("matched", "unmatched", "review", "ignored", "duplicate", "unparsed")


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
        "server_time": isoformat(now),
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
    message = get_outbound_sms(device.brand, message_id)
    if message.status == "leased" and message.leased_by != device.uuid:
        raise invalid_state("This message is leased to another device.")
    return report_outbound_sms(device.brand, message.id, status, error)


def start_of_day(brand, now):
    """Midnight of today in the brand's time zone, as UTC."""
    zone = ZoneInfo(brand.timezone or "Asia/Dhaka")
    local = now.astimezone(zone)
    return datetime.combine(local.date(), time.min, tzinfo=zone).astimezone(ZoneInfo("UTC"))


def device_dashboard(device):
    """Today's SMS by status, payments waiting for an SMS, completions today, unread
    notifications."""
    now = utcnow()
    since = start_of_day(device.brand, now)
    by_status = dict(
        db.session.execute(
            db.select(InboundSms.status, db.func.count())
            .where(InboundSms.brand_id == device.brand_id, InboundSms.created_at >= since)
            .group_by(InboundSms.status)
        ).all()
    )
    waiting = db.session.execute(
        db.select(db.func.count())
        .select_from(Payment)
        .where(Payment.brand_id == device.brand_id, Payment.status == "processing")
    ).scalar_one()
    # A completed payment's transaction is written at completion, and (brand_id, created_at) is
    # indexed.
    completed, volume = db.session.execute(
        db.select(db.func.count(), db.func.coalesce(db.func.sum(Transaction.amount), 0)).where(
            Transaction.brand_id == device.brand_id, Transaction.created_at >= since
        )
    ).one()
    return {
        "device": {
            "uuid": device.uuid,
            "name": device.name,
            "platform": device.platform,
            "app_version": device.app_version,
            "paired_at": isoformat(device.created_at),
            "last_heartbeat_at": isoformat(device.last_heartbeat_at),
            "last_sms_at": isoformat(device.last_sms_at),
        },
        "brand": {"name": device.brand.name, "timezone": device.brand.timezone},
        "sms_today": {
            "received": sum(by_status.values()),
            **{s: by_status.get(s, 0) for s in SMS_COUNTED},
        },
        "payments": {
            "awaiting_sms": waiting,
            "completed_today": completed,
            "completed_today_amount": format_amount(volume),
        },
        "outbound_queued": db.session.execute(
            db.select(db.func.count())
            .select_from(OutboundSms)
            .where(OutboundSms.brand_id == device.brand_id, OutboundSms.status == "queued")
        ).scalar_one(),
        "pending_notifications": count_pending(device),
        "server_time": isoformat(now),
    }
