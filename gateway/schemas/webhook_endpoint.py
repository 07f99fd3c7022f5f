"""Webhook endpoints (POST/GET/PATCH/DELETE /webhook-endpoints): the secret in the creation and
rotation answers only."""

from marshmallow import ValidationError, fields, validate

from ..webhooks.endpoints import CHOICES
from .common import BaseSchema, ChangeSchema, HttpUrl, PageArgs, Timestamp


def known_events(events):
    """A validator of the whole list, so that an unknown type is refused on `enabled_events`."""
    unknown = [event for event in events if event not in CHOICES]
    if unknown:
        raise ValidationError(f"Unknown event type {unknown[0]!r}; one of: {', '.join(CHOICES)}.")


def EnabledEvents(**kwargs):  # noqa: N802 - a field factory, read like a field class
    """`enabled_events`: event types, or ["*"] for every event; at least one."""
    return fields.List(
        fields.String(metadata={"enum": list(CHOICES)}),
        validate=[validate.Length(min=1, max=len(CHOICES)), known_events],
        metadata={
            "description": 'The event types sent to it, or ["*"] for every event.',
            "example": ["payment.completed", "refund.completed"],
        },
        **kwargs,
    )


class WebhookEndpointFieldsSchema(BaseSchema):
    """What a merchant writes of an endpoint."""

    url = HttpUrl(metadata={"example": "https://shop.example/webhooks"})
    enabled_events = EnabledEvents()
    description = fields.String(allow_none=True, validate=validate.Length(max=200))
    # Only JSON true or false: the document says boolean, so "yes" or 1 is refused, not guessed.
    enabled = fields.Boolean(truthy={True}, falsy={False})


class WebhookEndpointCreateSchema(WebhookEndpointFieldsSchema):
    """Body of POST /webhook-endpoints: live or test is the calling key's mode."""

    url = HttpUrl(required=True, metadata={"example": "https://shop.example/webhooks"})
    enabled_events = EnabledEvents(required=True)


class WebhookEndpointUpdateSchema(WebhookEndpointFieldsSchema, ChangeSchema):
    """Body of PATCH /webhook-endpoints/{id}: at least one of the fields to change."""


class WebhookEndpointSchema(BaseSchema):
    """`data` of an endpoint: never its secret."""

    id = fields.String(attribute="public_id", metadata={"example": "we_5b1d0c9e8f7a6b5c4d3e2f10"})
    url = fields.String()
    description = fields.String(allow_none=True)
    enabled_events = fields.List(fields.String(metadata={"enum": list(CHOICES)}))
    enabled = fields.Boolean()
    livemode = fields.Boolean()
    created_at = Timestamp()


class WebhookEndpointSecretSchema(WebhookEndpointSchema):
    """`data` of POST /webhook-endpoints and of a rotation: the endpoint and its new secret, shown
    this once."""

    secret = fields.String(
        metadata={"description": "Signs this endpoint's webhooks; it cannot be read again."}
    )
    secret_previous_until = Timestamp(
        allow_none=True,
        metadata={"description": "Until when the replaced secret also signs (rotations only)."},
    )


class WebhookEndpointListArgs(PageArgs):
    """Query of GET /webhook-endpoints."""
