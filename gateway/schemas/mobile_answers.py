"""Answer shapes of the companion app's protocol (/api/mobile/v1): what renders each answer is what
its OpenAPI document shows, and they follow what the OwnPay Console app reads.
"""

from marshmallow import fields

from ..clock import isoformat
from ..payments.models.payment import PAID_STATUSES
from .common import Amount, BaseSchema, ErrorSchema, Timestamp
from .mobile import MAX_BATCH


class MobileErrorSchema(ErrorSchema):
    """The error envelope of /api/mobile/v1 (gateway.errors): `error` is the message to show."""

    error = fields.String(
        required=True,
        metadata={"description": "The message to show; the same text as `message`."},
    )


class DeviceTokensSchema(BaseSchema):
    """`data` of POST /devices/token-refreshes: the new pair (the refresh token works once)."""

    access_token = fields.String(required=True)
    refresh_token = fields.String(required=True)
    token_type = fields.String(required=True, metadata={"enum": ["Bearer"]})
    expires_in = fields.Integer(
        required=True, metadata={"description": "Seconds the access token lives."}
    )
    device_uuid = fields.String(required=True)


class PairedDeviceSchema(DeviceTokensSchema):
    """`data` of POST /devices: the tokens and the SMS payloads' AES key (shown this once)."""

    aes_key = fields.String(
        required=True, metadata={"pattern": "^[0-9a-f]{64}$", "description": "AES-256, hex."}
    )


class HeartbeatAnswerSchema(BaseSchema):
    """`data` of POST /devices/heartbeats: what changed on the server."""

    server_time = Timestamp(required=True)
    next_heartbeat_seconds = fields.Integer(required=True)
    filter_rules_version = fields.Integer(
        required=True, metadata={"description": "Fetch /config/filter-rules when it changes."}
    )
    pending_notifications = fields.Integer(required=True)


class UnpairedSchema(BaseSchema):
    """`data` of DELETE /devices/{id}."""

    id = fields.String(required=True, metadata={"description": "The device's uuid."})
    deleted = fields.Boolean(required=True, metadata={"enum": [True]})


class SmsResultSchema(BaseSchema):
    """What became of one forwarded text."""

    local_id = fields.String(allow_none=True, required=True)
    status = fields.String(required=True, metadata={"enum": ["accepted", "duplicate", "rejected"]})
    server_ref = fields.String(allow_none=True, required=True)
    reason = fields.String(metadata={"description": "Why a rejected text was not stored."})


class SmsBatchAnswerSchema(BaseSchema):
    """`data` of POST /sms: each text's result, in the order sent, and the counts."""

    results = fields.List(
        fields.Nested(SmsResultSchema), required=True, metadata={"maxItems": MAX_BATCH}
    )
    accepted = fields.Integer(required=True)
    duplicate = fields.Integer(required=True)
    rejected = fields.Integer(required=True)


class FilterRulesSchema(BaseSchema):
    """`data` of GET /config/filter-rules: the senders and keywords the phone forwards."""

    version = fields.Integer(
        required=True, metadata={"description": "Changes whenever the rules do."}
    )
    allowed_senders = fields.List(fields.String(), required=True)
    positive_keywords = fields.List(fields.String(), required=True)
    negative_keywords = fields.List(fields.String(), required=True)
    check_interval_hours = fields.Integer(required=True)


class LeasedSmsSchema(BaseSchema):
    """One outbound text leased to the phone."""

    id = fields.Integer(required=True)
    to = fields.String(required=True, attribute="to_number")
    body = fields.String(required=True)
    lease_expires_at = Timestamp(required=True)


class LeasedSmsListSchema(BaseSchema):
    """`data` of GET /sms/queues."""

    messages = fields.List(fields.Nested(LeasedSmsSchema), required=True)


class OutboundReportSchema(BaseSchema):
    """`data` of POST /sms/queues/{id}/results: the message after the report."""

    id = fields.Integer(required=True)
    status = fields.String(attribute="shown_status", required=True)
    attempts = fields.Integer(required=True)
    next_attempt_at = fields.Function(
        lambda message: (
            isoformat(message.next_attempt_at) if message.shown_status == "queued" else None
        ),
        required=True,
        metadata={
            "type": "string",
            "format": "date-time",
            "nullable": True,
            "description": "When a failed message is tried again; null otherwise.",
        },
    )


class AcknowledgedSchema(BaseSchema):
    """`data` of POST /notifications/acknowledgements."""

    acknowledged = fields.Integer(
        required=True, metadata={"description": "How many were unread and are now read."}
    )


class DeviceNotificationSchema(BaseSchema):
    """One notification of GET /notifications (OwnPay Console's AppNotification)."""

    id = fields.Integer(required=True)
    type = fields.String(required=True, attribute="kind", metadata={"example": "payment.review"})
    title = fields.String(required=True)
    body = fields.String(allow_none=True, required=True)
    payload = fields.Function(
        lambda note: {"scope": "brand" if note.device_id is None else "device"},
        required=True,
        metadata={
            "type": "object",
            "properties": {"scope": {"type": "string", "enum": ["brand", "device"]}},
            "description": "`scope`: for every phone of the brand, or for this one alone.",
        },
    )
    created_at = Timestamp(required=True)


class NotificationFeedMetaSchema(BaseSchema):
    """How many unread notifications there are in all; `data` holds the oldest `limit`."""

    unacknowledged = fields.Integer(required=True)
    limit = fields.Integer(required=True)


class NotificationFeedSchema(BaseSchema):
    """The answer of GET /notifications: `data` is the list itself, as the app reads it."""

    success = fields.Boolean(required=True, metadata={"enum": [True]})
    data = fields.List(fields.Nested(DeviceNotificationSchema), required=True)
    meta = fields.Nested(NotificationFeedMetaSchema, required=True)


class PhoneTodaySchema(BaseSchema):
    """Today, from the brand's local midnight: money received and the payments made."""

    date = fields.Date(required=True, metadata={"description": "Today in the brand's time zone."})
    currency = fields.String(
        required=True, metadata={"description": "The brand's first currency, that of `revenue`."}
    )
    revenue = Amount(
        required=True,
        metadata={"description": "Gross amount of the payments completed today, in `currency`."},
    )
    completed = fields.Integer(
        required=True, metadata={"description": "Payments completed today, any currency."}
    )
    total = fields.Integer(required=True, metadata={"description": "Payments created today."})
    pending = fields.Integer(
        required=True,
        metadata={"description": "Of those, the ones still open (created or processing)."},
    )
    volume = fields.Dict(
        keys=fields.String(),
        values=Amount(),
        required=True,
        metadata={"description": "Gross amount completed today per currency the brand takes."},
    )


class RecentTransactionSchema(BaseSchema):
    """One of the latest completed payments."""

    trx_id = fields.String(required=True)
    amount = Amount(required=True)
    currency = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": list(PAID_STATUSES)})
    gateway = fields.String(
        required=True,
        allow_none=True,
        attribute="provider",
        metadata={"description": "The wallet that paid (bkash, nagad, …)."},
    )
    provider_trx_id = fields.String(
        required=True, allow_none=True, metadata={"description": "The wallet's own TrxID."}
    )
    created_at = Timestamp(required=True, metadata={"description": "When the payment completed."})


class DashboardDeviceSchema(BaseSchema):
    """The phone as the server knows it."""

    uuid = fields.String(required=True)
    name = fields.String(required=True)
    platform = fields.String(allow_none=True, required=True)
    app_version = fields.String(allow_none=True, required=True)
    paired_at = Timestamp(required=True, attribute="created_at")
    last_heartbeat_at = Timestamp(allow_none=True, required=True)
    last_sms_at = Timestamp(allow_none=True, required=True)


class DashboardBrandSchema(BaseSchema):
    """The brand the phone serves."""

    name = fields.String(required=True)
    timezone = fields.String(required=True)


class SmsTodaySchema(BaseSchema):
    """Texts received today, by what became of them."""

    received = fields.Integer(required=True)
    matched = fields.Integer(required=True)
    unmatched = fields.Integer(required=True)
    review = fields.Integer(required=True)
    ignored = fields.Integer(required=True)
    duplicate = fields.Integer(required=True)
    unparsed = fields.Integer(required=True)


class DashboardPaymentsSchema(BaseSchema):
    """Payments waiting for a text, and those completed today."""

    awaiting_sms = fields.Integer(
        required=True, metadata={"description": "Payments claimed, waiting for their SMS."}
    )
    completed_today = fields.Integer(required=True)
    completed_today_amount = Amount(
        required=True,
        metadata={
            "description": "Gross amount completed today in the brand's first currency: "
            "today.revenue, in today.currency (each currency is in today.volume)."
        },
    )


class DeviceDashboardSchema(BaseSchema):
    """`data` of GET /dashboard: what OwnPay Console's dashboard reads, and the phone's state."""

    today = fields.Nested(PhoneTodaySchema, required=True)
    recent_transactions = fields.List(
        fields.Nested(RecentTransactionSchema),
        required=True,
        metadata={"description": "The latest completed payments, newest first."},
    )
    unread_notifications = fields.Integer(required=True)
    device = fields.Nested(DashboardDeviceSchema, required=True)
    brand = fields.Nested(DashboardBrandSchema, required=True)
    sms_today = fields.Nested(SmsTodaySchema, required=True)
    payments = fields.Nested(DashboardPaymentsSchema, required=True)
    outbound_queued = fields.Integer(required=True)
    pending_notifications = fields.Integer(
        required=True, metadata={"description": "The same count as unread_notifications."}
    )
    server_time = Timestamp(required=True)
