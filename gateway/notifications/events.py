"""The hook points: what each event tells the merchant. Called inside the caller's transaction,
never raising.

This module imports no payments, SMS or webhooks code (those domains call it): it reads their rows
by table name, as gateway/states.py does, so no domain has to import back.
"""

import hashlib
from datetime import timedelta
from urllib.parse import urlsplit

from ..clock import utcnow
from ..extensions import db
from ..money import format_amount
from ..states import OUTBOX_FAILED, OUTBOX_PENDING
from .catalogue import (
    PAYMENT_COMPLETED,
    PAYMENT_REVIEW,
    PHONE_OFFLINE,
    PHONE_ONLINE,
    RATE_FEED_FAILING,
    SMS_GAP,
    WALLET_UNAPPLIED,
    WEBHOOKS_FAILING,
)
from .outbox import already_raised, local_time, raise_notification, transaction_lost
from .settings import settings_for, settings_of

# An attempt that fails this many automatic attempts in a row tells the merchant (about 36 minutes
# in), as does running out of attempts; at most once an hour per brand.
FAILING_AFTER_ATTEMPTS = 3


def table(name):
    """Another domain's table, by name."""
    return db.metadata.tables[name]


def notify_payments_completed(completions):
    """Live payments completed (lifecycle.complete_payments): one notification each, their brands'
    settings read in one query. A test payment tells the merchant nothing (issue 31).
    """
    completions = [(payment, trx) for payment, trx in completions if payment.livemode]
    if not completions:
        return
    try:
        settings = settings_of(payment.brand_id for payment, _ in completions)
    except Exception as error:  # noqa: BLE001 - never raising: each raise_notification reads alone
        if transaction_lost(error):
            raise  # the completion is lost with its connection: its retry notifies
        settings = {}
    for payment, transaction in completions:
        name = payment.reference or payment.public_id
        raise_notification(
            payment.brand_id,
            PAYMENT_COMPLETED,
            f"Payment {name} completed: {format_amount(payment.amount)} {payment.currency}",
            f"Paid by {transaction.provider or 'mobile money'}, TrxID "
            f"{transaction.provider_trx_id or '—'} (transaction {transaction.trx_id}).",
            f"/panel/payments/{payment.public_id}",
            dedupe_key=f"{PAYMENT_COMPLETED}:{payment.id}",
            settings=settings.get(payment.brand_id),
        )


def notify_payments_in_review(payment_ids, reason):
    """Live payments just given a review reason (sms/settling.py give_review_reason): one
    notification each; a test payment in review tells the merchant nothing."""
    payments = table("payments").c
    rows = db.session.execute(
        db.select(
            payments.id,
            payments.brand_id,
            payments.public_id,
            payments.reference,
            payments.amount,
            payments.currency,
        ).where(
            payments.id.in_(list(payment_ids)),
            payments.review_reason == reason[:255],
            payments.livemode.is_(True),
        )
    ).all()
    digest = hashlib.sha256(reason.encode()).hexdigest()[:16]
    for row in rows:
        raise_notification(
            row.brand_id,
            PAYMENT_REVIEW,
            f"Payment {row.reference or row.public_id} needs review "
            f"({format_amount(row.amount)} {row.currency})",
            f"{reason}\nApprove or reject it in the panel.",
            f"/panel/payments/{row.public_id}",
            dedupe_key=f"{PAYMENT_REVIEW}:{row.id}:{digest}",
        )


def notify_webhook_attempt(delivery_id, status, attempts):
    """A webhook attempt recorded (or a delivery failed for good): failing live ones tell the
    merchant, hourly.
    """
    if status != OUTBOX_FAILED and not (
        status == OUTBOX_PENDING and attempts == FAILING_AFTER_ATTEMPTS
    ):
        return
    deliveries = table("webhook_deliveries").c
    row = db.session.execute(
        db.select(deliveries.brand_id, deliveries.url, deliveries.event).where(
            deliveries.id == delivery_id, deliveries.livemode.is_(True)
        )
    ).first()
    if row is None:  # gone, or a test delivery: test traffic tells the merchant nothing
        return
    host = urlsplit(row.url).hostname or row.url
    given_up = status == OUTBOX_FAILED
    raise_notification(
        row.brand_id,
        WEBHOOKS_FAILING,
        f"Webhook deliveries to {host} are failing",
        (
            f"A {row.event} delivery has used every attempt and will not be retried: "
            "redeliver it by hand once your receiver answers."
            if given_up
            else f"A {row.event} delivery has failed {attempts} attempts in a row; "
            "it keeps retrying. Check that your receiver is up and answers 2xx."
        ),
        f"/panel/developers/webhook-deliveries/{delivery_id}",
        dedupe_key=f"{WEBHOOKS_FAILING}:{utcnow():%Y%m%d%H}",
    )


def outage_key(event, device_id, last_heartbeat_at):
    """One key per outage: the device and the last heartbeat before the silence."""
    return f"{event}:{device_id}:{last_heartbeat_at:%Y%m%d%H%M%S%f}"


def notify_phone_offline(brand_id, device_id, name, last_heartbeat_at, minutes):
    """A phone silent for longer than the brand's limit: one notification per outage."""
    return raise_notification(
        brand_id,
        PHONE_OFFLINE,
        f"Phone {name} is offline",
        f"No heartbeat for more than {minutes} minutes (last at "
        f"{local_time(brand_id, last_heartbeat_at)}). Payments paid meanwhile wait for their "
        "SMS: check the phone has power, network and the companion app running.",
        "/panel/devices",
        dedupe_key=outage_key(PHONE_OFFLINE, device_id, last_heartbeat_at),
    )


def phone_heard_from(device, previous_heartbeat_at):
    """A heartbeat after an outage that was notified: the phone is back (once, if the brand wants
    it).
    """
    if previous_heartbeat_at is None:
        return
    settings = settings_for(device.brand_id)
    silence = utcnow() - previous_heartbeat_at
    if not settings.notify_back_online or silence <= timedelta(minutes=settings.offline_minutes):
        return  # no outage to end (the usual heartbeat: one SELECT)
    if not already_raised(
        device.brand_id, outage_key(PHONE_OFFLINE, device.id, previous_heartbeat_at)
    ):
        return
    raise_notification(
        device.brand_id,
        PHONE_ONLINE,
        f"Phone {device.name} is back online",
        "Its heartbeats arrive again; texts it held are forwarded now.",
        "/panel/devices",
        dedupe_key=outage_key(PHONE_ONLINE, device.id, previous_heartbeat_at),
    )


def notify_chain_gap(
    brand_id, gap_key, wallet, sentence, before_at, after_at, sms_public_id, strict=True
):
    """A gap in a wallet's balance chain (sms/chain_gaps.py): the phone missed a text; once per
    gap.

    `before_at` and `after_at` are the printed (local) times of the texts on either side; `wallet`
    names the provider and the number or phone (a phone's name is the merchant's text). `strict`:
    the brand holds the credits after a gap for review (else they complete, flagged).
    """
    between = (
        f"between the texts printed {before_at:%d/%m/%Y %H:%M} and {after_at:%d/%m/%Y %H:%M}"
        if before_at is not None
        else f"before the text printed {after_at:%d/%m/%Y %H:%M}"
    )
    return raise_notification(
        brand_id,
        SMS_GAP,
        f"{wallet}: a text may be missing",
        f"{wallet}: {sentence} ({between}). The phone did not forward it: "
        + (
            "credits after it wait for review until it arrives. "
            if strict
            else "credits after it complete, flagged. "
        )
        + "Check that the phone receives and forwards every text; if the text never comes, "
        "compare the wallet's own statement and set the starting balance in "
        "SMS inbox > Balance chains.",
        f"/panel/sms-inbox/{sms_public_id}",
        dedupe_key=f"{SMS_GAP}:{gap_key}",
    )


def notify_rate_feed_failing(brand_id, url, problem, failing_since):
    """A brand's rate feed failed (payments/rate_feed.py): once per run of failures, the last rates
    kept."""
    host = urlsplit(url).hostname or url
    return raise_notification(
        brand_id,
        RATE_FEED_FAILING,
        f"The exchange rate feed at {host} is failing",
        f"{problem}\nNew payments keep using the last rates. Check the feed, or set the rates by "
        "hand on the Currencies page.",
        "/panel/settings/currencies",
        dedupe_key=f"{RATE_FEED_FAILING}:{brand_id}:{failing_since:%Y%m%d%H%M%S%f}",
    )


def notify_wallet_unapplied(payment, trip, wallet):
    """Money paid at a wallet's API that did not pay `payment` (wallets/__init__.py
    mark_unapplied): once per trip, with what the wallet took and why it was not applied. `wallet`:
    its name as merchants know it (bKash)."""
    name = payment.reference or payment.public_id
    paid = trip.paid_amount if trip.paid_amount is not None else trip.amount
    return raise_notification(
        payment.brand_id,
        WALLET_UNAPPLIED,
        f"{wallet}: money paid for payment {name} was not applied",
        f"{wallet} says it was paid {format_amount(paid) if paid is not None else '?'} "
        f"taka (TrxID {trip.provider_trx_id or '—'}) for payment {name}, but it did not pay it: "
        f"{trip.last_error}\nThe money is in your {wallet} merchant account. Refund it "
        "through the wallet, or mark it handled, on the payment's page.",
        f"/panel/payments/{payment.public_id}",
        dedupe_key=f"{WALLET_UNAPPLIED}:{trip.id}",
    )
