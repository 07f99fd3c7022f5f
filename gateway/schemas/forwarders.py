"""What the public forwarder apps post to their intake URL: SMS Gateway for Android's webhook
events and SMS to URL Forwarder's JSON template (docs/architecture.md, "Forwarders")."""

import marshmallow as ma
from marshmallow import fields, validate

from ..sms.companion_items import ReceivedAt
from .common import BaseSchema, envelope

MAX_TEXT = 16 * 1024
SMS_RECEIVED = "sms:received"
SYSTEM_PING = "system:ping"


class StampOrIso(ReceivedAt):
    """A moment as epoch milliseconds, a string of them (a template may quote it) or ISO 8601."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        return super()._deserialize(value, attr, data, **kwargs)


class SmsReceivedPayloadSchema(BaseSchema):
    """The payload of an `sms:received` event (the app's SmsEventPayload.SmsReceived)."""

    message = fields.String(required=True, validate=validate.Length(max=MAX_TEXT))
    sender = fields.String(required=True, validate=validate.Length(min=1, max=64))
    receivedAt = ReceivedAt(load_default=None)  # noqa: N815 - the app's field name
    messageId = fields.String(load_default=None)  # noqa: N815
    recipient = fields.String(load_default=None, allow_none=True)
    simNumber = fields.Integer(load_default=None, allow_none=True)  # noqa: N815


class SmsGatewayEventSchema(BaseSchema):
    """One webhook event of SMS Gateway for Android: {id, webhookId, event, deviceId, payload}."""

    id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    webhookId = fields.String(load_default=None)  # noqa: N815
    event = fields.String(required=True, validate=validate.Length(min=1, max=64))
    deviceId = fields.String(load_default=None)  # noqa: N815
    payload = fields.Dict(load_default=dict)

    @ma.post_load
    def read_sms(self, data, **kwargs):
        """An `sms:received` event's payload must be a received SMS; others are not read."""
        if data["event"] == SMS_RECEIVED:
            try:
                data["payload"] = SmsReceivedPayloadSchema().load(data["payload"])
            except ma.ValidationError as error:
                raise ma.ValidationError({"payload": error.messages}) from error
        return data


class SmsToUrlSchema(BaseSchema):
    """SMS to URL Forwarder's default template: {from, text, sentStamp, receivedStamp, sim}."""

    sender = fields.String(data_key="from", required=True, validate=validate.Length(min=1, max=64))
    text = fields.String(required=True, validate=validate.Length(max=MAX_TEXT))
    sentStamp = StampOrIso(load_default=None)  # noqa: N815 - the app's field name
    receivedStamp = StampOrIso(load_default=None)  # noqa: N815
    sim = fields.String(load_default=None)


class IntakeAnswerSchema(BaseSchema):
    """What the intake answers a forwarder: the text stored (`accepted`), seen before
    (`duplicate`), a ping taken as a `heartbeat`, or another event `ignored`."""

    status = fields.String(required=True)
    server_ref = fields.String(allow_none=True)


INTAKE_ANSWER = envelope(IntakeAnswerSchema)()
