"""A payment's story for its detail page: created, claimed, SMS matched, completed, webhooks,
refunds.
"""

from flask_babel import gettext as _
from flask_babel import ngettext

from ..accounts.models.audit import AuditLog
from ..extensions import db
from ..i18n import lazy_gettext as _l
from ..payments.models.payment import Refund
from ..sms.models.inbound_sms import InboundSms
from ..states import PAYMENT_EXPIRED, PAYMENT_FAILED, SMS_MATCHED, SMS_RETURNED
from ..webhooks.models.webhook import WebhookDelivery
from .formatting import local_datetime, money, number, provider_name, status_name

# What a panel action reads as on the timeline.
AUDIT_TITLES = {
    "payment.approve": _l("Approved after review"),
    "payment.reject": _l("Rejected after review"),
    "payment.cancel": _l("Cancelled in the panel"),
    "payment.complete_late": _l("Completed after late money arrived"),
    "payment.return_late": _l("Late money returned to the customer"),
}
SMS_TITLES = {SMS_MATCHED: _l("SMS matched"), SMS_RETURNED: _l("SMS arrived late; money returned")}

# Events stamped in the same instant read in the order they happen (an SMS is matched, then the
# payment completes).
KIND_ORDER = {
    kind: rank
    for rank, kind in enumerate(
        (
            "created",
            "claim",
            "sms",
            "completed",
            "cancelled",
            "expired",
            "failed",
            "action",
            "webhook",
            "refund",
        )
    )
}


def event(at, kind, title, detail=None, lines=()):
    """One entry; `lines` are sub-items such as webhook attempts."""
    return {"at": at, "kind": kind, "title": title, "detail": detail, "lines": list(lines)}


def state_events(payment):
    """The payment's own timestamps."""
    events = [
        event(
            payment.created_at,
            "created",
            _("Payment created"),
            money(payment.amount, payment.currency),
        )
    ]
    if payment.claimed_at:
        detail = f"{provider_name(payment.provider)} · TrxID {payment.provider_trx_id or '—'}"
        if payment.sender_number:
            detail += " · " + _("from %(number)s", number=payment.sender_number)
        events.append(
            event(payment.claimed_at, "claim", _("Customer submitted a transaction ID"), detail)
        )
    if payment.completed_at:
        trx_id = payment.transaction.trx_id if payment.transaction else "—"
        events.append(event(payment.completed_at, "completed", _("Completed"), trx_id))
    if payment.cancelled_at:
        events.append(event(payment.cancelled_at, "cancelled", _("Cancelled")))
    if payment.status in (PAYMENT_EXPIRED, PAYMENT_FAILED):
        title = _("Expired") if payment.status == PAYMENT_EXPIRED else _("Failed")
        events.append(event(payment.updated_at, payment.status, title))
    return events


def sms_events(payment):
    """The SMS bound to this payment (matched, or held for review)."""
    texts = (
        db.session.execute(db.select(InboundSms).where(InboundSms.payment_id == payment.id))
        .scalars()
        .all()
    )
    return [
        event(
            sms.matched_at or sms.created_at,
            "sms",
            SMS_TITLES.get(sms.status, _l("SMS held for review")),
            f"{sms.sender}: {money(sms.amount, 'BDT')} · {sms.counterparty or '—'}",
            [sms.body],
        )
        for sms in texts
    ]


def webhook_events(payment):
    """Each webhook sent about the payment or its transaction, with every attempt."""
    about = WebhookDelivery.payment_id == payment.id
    if payment.transaction is not None:
        about = db.or_(about, WebhookDelivery.transaction_id == payment.transaction.id)
    deliveries = (
        db.session.execute(
            db.select(WebhookDelivery)
            .options(db.selectinload(WebhookDelivery.attempt_log))
            .where(WebhookDelivery.brand_id == payment.brand_id, about)
            .order_by(WebhookDelivery.id)
        )
        .scalars()
        .all()
    )
    events = []
    for delivery in deliveries:
        attempts = [
            _(
                "Attempt at %(time)s: %(outcome)s",
                time=local_datetime(attempt.attempted_at, "HH:mm:ss"),
                outcome=attempt.response_status or attempt.error or "—",
            )
            for attempt in delivery.attempt_log
        ]
        # %(count)s, not %(num)s: ngettext keeps num for the plural choice and cannot take it twice.
        detail = ngettext(
            "%(status)s after %(count)s attempt · %(url)s",
            "%(status)s after %(count)s attempts · %(url)s",
            delivery.attempts,
            status=status_name(delivery.log_status),
            count=number(delivery.attempts),
            url=delivery.url,
        )
        events.append(
            event(
                delivery.created_at,
                "webhook",
                _("Webhook %(event)s", event=delivery.event),
                detail,
                attempts,
            )
        )
    return events


def refund_events(payment, refunded_by):
    """Refunds of the payment's transaction, with who made them when done in the panel."""
    if payment.transaction is None:
        return []
    refunds = (
        db.session.execute(
            db.select(Refund)
            .where(Refund.transaction_id == payment.transaction.id)
            .order_by(Refund.id)
        )
        .scalars()
        .all()
    )
    events = []
    for refund in refunds:
        detail = refund.reason or ""
        if refund.id in refunded_by:
            detail = " · ".join(
                filter(None, [detail, _("by %(user)s", user=refunded_by[refund.id])])
            )
        events.append(
            event(
                refund.created_at,
                "refund",
                _("Refunded %(amount)s", amount=money(refund.amount, payment.currency)),
                detail,
            )
        )
    return events


def audit_events(payment):
    """Panel actions on the payment, and which refunds were made by whom."""
    entries = (
        db.session.execute(
            db.select(AuditLog)
            .where(
                AuditLog.brand_id == payment.brand_id,
                AuditLog.target_type == "payment",
                AuditLog.target_id == payment.public_id,
            )
            .order_by(AuditLog.id)
        )
        .scalars()
        .all()
    )
    refunded_by = {
        (entry.details or {}).get("refund_id"): entry.user_email
        for entry in entries
        if entry.action == "payment.refund"
    }
    events = [
        event(
            entry.created_at,
            "action",
            AUDIT_TITLES[entry.action],
            _("by %(user)s", user=entry.user_email or "—"),
        )
        for entry in entries
        if entry.action in AUDIT_TITLES
    ]
    return events, refunded_by


def payment_timeline(payment):
    """Every event of the payment, oldest first."""
    actions, refunded_by = audit_events(payment)
    events = (
        state_events(payment)
        + sms_events(payment)
        + webhook_events(payment)
        + refund_events(payment, refunded_by)
        + actions
    )
    return sorted(
        events, key=lambda item: (item["at"], KIND_ORDER.get(item["kind"], len(KIND_ORDER)))
    )
