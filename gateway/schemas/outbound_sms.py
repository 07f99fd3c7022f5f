"""Outbound SMS queue: the message record, the request that queues one, the list filter."""

from marshmallow import fields, validate

from ..sms.models.outbound_sms import OUTBOUND_SMS_STATUSES
from .common import BaseSchema, Livemode, PageArgs, Phone, Timestamp


class OutboundSmsSchema(BaseSchema):
    """A queued, leased, sent or failed message."""

    id = fields.Integer()
    to = fields.String(attribute="to_number")
    body = fields.String()
    status = fields.String(attribute="shown_status", metadata={"enum": list(OUTBOUND_SMS_STATUSES)})
    attempts = fields.Integer()
    last_error = fields.String(allow_none=True)
    created_at = Timestamp()
    sent_at = Timestamp(allow_none=True)
    livemode = Livemode()


class OutboundSmsCreateSchema(BaseSchema):
    """Body of POST /sms/outbound."""

    to = Phone(required=True)
    body = fields.String(required=True, validate=validate.Length(min=1, max=1000))


class OutboundSmsListArgs(PageArgs):
    """Query of GET /sms/outbound."""

    status = fields.String(validate=validate.OneOf(OUTBOUND_SMS_STATUSES))
