"""Raising a notification: one row per thing told, one outbox row per channel, woken after commit.

Raising runs inside the caller's transaction (a payment's, a heartbeat's, a sweep's) under a
SAVEPOINT and never raises: a fault here rolls back only the notification, never the payment that
caused it. A lost database connection is no fault of the notification: it is raised, as the whole
transaction is lost with it, so that the caller's retry writes the payment and its notification
together.
"""

import logging
from datetime import timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import current_app
from sqlalchemy.exc import DBAPIError, IntegrityError, PendingRollbackError
from sqlalchemy.orm import joinedload

from .. import jobs
from ..accounts.models.brand import Brand
from ..clock import utcnow
from ..devices.brand_devices import brand_phones
from ..devices.models.device import COMPANION_APP, Device
from ..extensions import db
from ..mail.outbox import mail_configured
from ..outbox.attempts import wake_after_commit
from ..outbox.kind import OutboxKind
from ..outbox.schedule import BACKOFF, RetrySchedule
from ..states import NOTIFICATION_DELIVERY, OUTBOX_FAILED, OUTBOX_PENDING
from .catalogue import APP, CHANNELS, EMAIL, TELEGRAM, TEST
from .models.notification import MerchantNotification, NotificationDelivery
from .settings import chosen_channels, recipients, settings_for, telegram_ready

log = logging.getLogger(__name__)

SEND_NOTIFICATION = "gateway.notifications.sending.send_notification"
RETRY = RetrySchedule(
    BACKOFF[:5],
    scale_setting="NOTIFICATION_RETRY_SCALE",
)
OUTBOX = OutboxKind(
    name="notification",
    machine=NOTIFICATION_DELIVERY,
    queue=jobs.WEBHOOKS,
    job=SEND_NOTIFICATION,
    schedule=RETRY,
    lease=timedelta(seconds=60),
    expired_error="No result within its lease: the process sending it stopped.",
)


def channel_ready(settings, channel):
    """Whether a channel has what it needs to send: recipients and SMTP, a bot and chat, a paired
    phone.
    """
    if channel == EMAIL:
        return bool(recipients(settings)) and mail_configured(settings.brand_id)
    if channel == TELEGRAM:
        return telegram_ready(settings)
    return channel == APP and has_paired_phone(settings.brand_id)


def has_paired_phone(brand_id):
    """Whether the brand has a paired (not revoked) companion phone to tell (a forwarder reads no
    notifications)."""
    return (
        db.session.execute(
            db.select(Device.id).where(*brand_phones(brand_id), Device.app == COMPANION_APP)
        ).first()
        is not None
    )


def panel_link(brand_id, path):
    """An absolute address of a panel page: the brand's own origin when it has one, else
    BASE_URL."""
    base = db.session.execute(db.select(Brand.base_url).where(Brand.id == brand_id)).scalar()
    return f"{(base or current_app.config['BASE_URL']).rstrip('/')}{path}"


def local_time(brand_id, moment):
    """A moment as the merchant reads it: in the brand's time zone, named."""
    name = db.session.execute(db.select(Brand.timezone).where(Brand.id == brand_id)).scalar()
    try:
        zone = ZoneInfo(name or current_app.config.get("DEFAULT_TIMEZONE", "Asia/Dhaka"))
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    return f"{moment.astimezone(zone):%Y-%m-%d %H:%M} ({zone.key})"


def raise_notification(
    brand_id, event, subject, text, path=None, dedupe_key=None, channels=None, settings=None
):
    """Write a notification and its deliveries for the chosen, ready channels; the caller commits.

    `path` is the panel page it links to. A `dedupe_key` already raised for the brand raises
    nothing. `settings` are the brand's, when the caller read them already (settings_of for a
    batch). Returns the notification, or None when nothing was written (no channel, a repeat, or
    a fault, which is logged and swallowed).
    """
    try:
        # Reads first, outside the SAVEPOINT: most events have no channel, and then cost one SELECT.
        settings = settings_for(brand_id) if settings is None else settings
        picked = chosen_channels(settings, event) if channels is None else channels
        picked = [channel for channel in picked if channel_ready(settings, channel)]
        if not picked or (dedupe_key and already_raised(brand_id, dedupe_key)):
            return None
        with db.session.begin_nested():
            now = utcnow()
            note = MerchantNotification(
                brand_id=brand_id,
                event=event,
                dedupe_key=dedupe_key,
                subject=subject[:200],
                text=text,
                link=panel_link(brand_id, path) if path else None,
                created_at=now,
            )
            note.deliveries = [
                NotificationDelivery(
                    brand_id=brand_id,
                    channel=channel,
                    status=OUTBOX_PENDING,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                    updated_at=now,
                )
                for channel in picked
            ]
            db.session.add(note)
            db.session.flush()
    except IntegrityError:
        return None  # a racing writer raised the same dedupe_key first
    except Exception as error:  # noqa: BLE001 - telling must never fail what it tells about
        if transaction_lost(error):
            raise  # the payment is lost too: its retry raises the notification with it
        log.exception("notification %s for brand %s not raised", event, brand_id)
        return None
    for delivery in note.deliveries:
        wake_after_commit(OUTBOX, delivery)
    return note


def transaction_lost(error):
    """Whether an error lost the caller's whole transaction (its connection died), not only the
    notification."""
    return isinstance(error, PendingRollbackError) or (
        isinstance(error, DBAPIError) and error.connection_invalidated
    )


def already_raised(brand_id, dedupe_key):
    """Whether the brand was already told under this key."""
    return (
        db.session.execute(
            db.select(MerchantNotification.id).where(
                MerchantNotification.brand_id == brand_id,
                MerchantNotification.dedupe_key == dedupe_key,
            )
        ).first()
        is not None
    )


def send_test_notification(brand_id):
    """A test to every channel that is set up, through the outbox; None when no channel is."""
    return raise_notification(
        brand_id,
        TEST,
        "Test notification from your payment gateway",
        "Notifications reach you here. You chose which events do in the panel's "
        "Notifications page.",
        "/panel/notifications",
        channels=list(CHANNELS),
    )


def recent_deliveries(brand_id, limit=30):
    """The brand's latest deliveries with their notification, newest first."""
    return (
        db.session.execute(
            db.select(NotificationDelivery)
            .options(joinedload(NotificationDelivery.notification))
            .where(NotificationDelivery.brand_id == brand_id)
            .order_by(NotificationDelivery.created_at.desc(), NotificationDelivery.id.desc())
            .limit(limit)
        )
        .scalars()
        .all()
    )


def failed_count(brand_id):
    """How many of the brand's deliveries failed for good."""
    return db.session.execute(
        db.select(db.func.count())
        .select_from(NotificationDelivery)
        .where(
            NotificationDelivery.brand_id == brand_id, NotificationDelivery.status == OUTBOX_FAILED
        )
    ).scalar_one()
