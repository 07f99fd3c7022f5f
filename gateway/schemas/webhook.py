"""Webhook delivery records (docs/spec/merchant-api.md 2.6) and the webhook test request."""

from marshmallow import fields

from ..webhooks.models.webhook import LOG_STATUSES
from .common import BaseSchema, HttpUrl, Timestamp


class DeliverySchema(BaseSchema):
    """An element of GET /webhooks/deliveries: exactly the fields of docs/spec/merchant-api.md
    2.6."""

    id = fields.Integer()
    transaction_id = fields.Integer(allow_none=True)
    event = fields.String(metadata={"example": "payment.completed"})
    url = fields.String()
    payload = fields.String(
        metadata={"description": "The notification body as sent, a JSON-encoded string."}
    )
    response_status = fields.Integer(allow_none=True)
    response_body = fields.String(allow_none=True)
    attempts = fields.Integer()
    status = fields.String(attribute="log_status", metadata={"enum": list(LOG_STATUSES)})
    created_at = Timestamp()


class AttemptSchema(BaseSchema):
    attempted_at = Timestamp()
    response_status = fields.Integer(allow_none=True)
    response_body = fields.String(allow_none=True)
    duration_ms = fields.Integer(allow_none=True)
    error = fields.String(allow_none=True)


class DeliveryDetailSchema(DeliverySchema):
    """One delivery with its event id, its endpoint, next attempt and the log of every attempt."""

    event_id = fields.String()
    livemode = fields.Boolean()
    endpoint_id = fields.Function(
        lambda delivery: delivery.endpoint.public_id if delivery.endpoint_id else None,
        metadata={
            "type": "string",
            "nullable": True,
            "description": "The webhook endpoint it went to; null for the payment's callback_url, "
            "the brand's webhook URL or a test URL.",
        },
    )
    next_attempt_at = Timestamp(allow_none=True)
    attempt_log = fields.List(fields.Nested(AttemptSchema))


class WebhookTestSchema(BaseSchema):
    """Body of POST /webhooks/tests: where to send, default the brand's webhook URL."""

    url = HttpUrl(metadata={"description": "Defaults to the brand's webhook URL."})
