"""The periodic watch: phones gone silent, payment texts no payment claimed, and due deliveries
woken.
"""

from datetime import timedelta

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..devices.brand_devices import phones
from ..devices.models.device import Device
from ..extensions import db
from ..money import format_amount
from ..states import SMS_UNMATCHED
from .catalogue import PHONE_OFFLINE, PHONE_ONLINE, SMS_UNCLAIMED
from .events import notify_phone_offline, outage_key, table
from .models.notification import (
    MerchantNotification,
    NotificationDelivery,
    NotificationSettings,
)
from .outbox import local_time, raise_notification

DEFAULTS = {"offline_minutes": 15, "unclaimed_minutes": 60}
LOOKBACK = timedelta(days=1)  # an SMS is told about within a day of its grace period, or never
BATCH = 500


def brand_minutes(name):
    """{brand_id: minutes} of one threshold, for brands that saved settings."""
    column = getattr(NotificationSettings, name)
    return dict(db.session.execute(db.select(NotificationSettings.brand_id, column)).all())


def told_keys(pairs):
    """Which of these (brand_id, dedupe_key) pairs were already raised (one indexed lookup)."""
    if not pairs:
        return set()
    pair = db.tuple_(MerchantNotification.brand_id, MerchantNotification.dedupe_key)
    return set(
        db.session.execute(
            db.select(MerchantNotification.brand_id, MerchantNotification.dedupe_key).where(
                pair.in_(pairs)
            )
        ).all()
    )


def watch_phones(now):
    """Raise phone.offline for each paired phone silent past its brand's limit (once per outage)."""
    limits = brand_minutes("offline_minutes")
    rows = db.session.execute(
        db.select(Device.id, Device.brand_id, Device.name, Device.last_heartbeat_at).where(
            *phones(),
            Device.last_heartbeat_at.is_not(None),
            Device.last_heartbeat_at < now - timedelta(minutes=2),
        )
    ).all()
    keys = {r.id: (r.brand_id, outage_key(PHONE_OFFLINE, r.id, r.last_heartbeat_at)) for r in rows}
    told = told_keys(list(keys.values()))
    raised = 0
    for row in rows:
        minutes = limits.get(row.brand_id, DEFAULTS["offline_minutes"])
        if keys[row.id] in told:
            continue  # this outage was told already: one notification per outage
        if now - row.last_heartbeat_at > timedelta(minutes=minutes):
            raised += (
                notify_phone_offline(row.brand_id, row.id, row.name, row.last_heartbeat_at, minutes)
                is not None
            )
    return raised


def watch_unclaimed_texts(now):
    """Raise sms.unclaimed for each payment text left unmatched past its brand's grace period."""
    limits = brand_minutes("unclaimed_minutes")
    sms = table("inbound_sms").c
    longest = max([DEFAULTS["unclaimed_minutes"], *limits.values()])
    rows = db.session.execute(
        db.select(
            sms.id,
            sms.brand_id,
            sms.public_id,
            sms.provider,
            sms.amount,
            sms.provider_trx_id,
            sms.counterparty,
            sms.created_at,
        )
        .where(
            sms.status == SMS_UNMATCHED,
            sms.livemode.is_(True),  # a simulated text of test mode tells nobody
            sms.payment_id.is_(None),
            sms.incoming.is_(True),
            sms.amount.is_not(None),
            sms.created_at > now - timedelta(minutes=longest) - LOOKBACK,
            sms.created_at <= now - timedelta(minutes=min([5, *limits.values()])),
        )
        .order_by(sms.created_at)
        .limit(BATCH)
    ).all()
    told = told_keys([(r.brand_id, f"{SMS_UNCLAIMED}:{r.id}") for r in rows])
    raised = 0
    for row in rows:
        minutes = limits.get(row.brand_id, DEFAULTS["unclaimed_minutes"])
        key = f"{SMS_UNCLAIMED}:{row.id}"
        if (row.brand_id, key) in told or now - row.created_at <= timedelta(minutes=minutes):
            continue
        provider = (row.provider or "mobile money").capitalize()
        raised += (
            raise_notification(
                row.brand_id,
                SMS_UNCLAIMED,
                f"{provider} {format_amount(row.amount)} received, but no payment claimed it",
                f"TrxID {row.provider_trx_id or '—'} from "
                f"{row.counterparty or 'an unknown number'}, "
                f"received {local_time(row.brand_id, row.created_at)}, has waited "
                f"{minutes} minutes. "
                "If a customer paid, match it to their payment by hand in the SMS inbox; otherwise "
                "it was not for a payment.",
                f"/panel/sms-inbox/{row.public_id}",
                dedupe_key=key,
            )
            is not None
        )
    return raised


def sweep_notifications(now=None):
    """The periodic job: watch phones and texts and commit what was raised (each delivery is woken
    after the commit; one whose wake-up was lost, by the outbox sweep). How many were raised."""
    now = now or utcnow()
    with unit_of_work():
        return watch_phones(now) + watch_unclaimed_texts(now)


KEPT = timedelta(days=90)
KEPT_FOR_GOOD = (PHONE_OFFLINE, PHONE_ONLINE)  # their keys end an outage's "once": never pruned


def prune_notifications(now=None):
    """Forget notifications older than 90 days with nothing left to send; returns how many."""
    now = now or utcnow()
    old = (
        db.select(MerchantNotification.id)
        .where(
            MerchantNotification.created_at < now - KEPT,
            MerchantNotification.event.not_in(KEPT_FOR_GOOD),
            ~db.exists().where(
                NotificationDelivery.notification_id == MerchantNotification.id,
                NotificationDelivery.status == "pending",
            ),
        )
        .limit(BATCH)
    )
    with unit_of_work():
        ids = db.session.execute(old).scalars().all()
        if ids:
            db.session.execute(
                db.delete(NotificationDelivery).where(NotificationDelivery.notification_id.in_(ids))
            )
            db.session.execute(
                db.delete(MerchantNotification).where(MerchantNotification.id.in_(ids))
            )
    return len(ids)
