"""Events (GET /events) and their replay (POST /events/{id}/redeliver)."""

from datetime import timezone

from marshmallow import fields, validate

from ..webhooks.events import EVENTS
from .common import BaseSchema, PageArgs, Timestamp

EVENT_ID = {"metadata": {"example": "evt_3f6c0e2d9a41b7c85e10f2aa"}}


class EventSchema(BaseSchema):
    """`data` of an event: what its webhook body carries, and whether it is live or test."""

    id = fields.String(attribute="public_id", **EVENT_ID)
    type = fields.String(metadata={"enum": list(EVENTS)})
    created = Timestamp(attribute="created_at")
    livemode = fields.Boolean()
    data = fields.Dict(
        metadata={"description": "The webhook body's `data`, exactly as it was sent."}
    )


class EventListArgs(PageArgs):
    """Query of GET /events: by type, and by the time it happened (`from`, `to`, inclusive)."""

    type = fields.String(validate=validate.OneOf(EVENTS))
    from_ = fields.AwareDateTime(data_key="from", attribute="from", default_timezone=timezone.utc)
    to = fields.AwareDateTime(default_timezone=timezone.utc)


class EventRedeliverSchema(BaseSchema):
    """Body of POST /events/{id}/redeliver, optional: one endpoint to send it to."""

    endpoint_id = fields.String(
        validate=validate.Length(min=1, max=40),
        metadata={
            "description": "Send to this endpoint only. Without it: to every enabled endpoint "
            "that chooses the event now, and to the URL it first went to.",
            "example": "we_5b1d0c9e8f7a6b5c4d3e2f10",
        },
    )
