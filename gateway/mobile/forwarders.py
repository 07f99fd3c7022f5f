"""The forwarders' intake: one URL per forwarder, where SMS Gateway for Android and SMS to URL
Forwarder post each text as they do to any server (docs/architecture.md, "Forwarders").

Each request is authenticated before its body is read as JSON (the signature covers the raw
bytes), answered 2xx as soon as the text is stored (the apps retry anything else), and refused in
the envelope every /api/ route shares.
"""

import marshmallow as ma
from flask import Blueprint, jsonify, request

from ..answer_commit import unit_of_work
from ..api.resource import check_json_body
from ..devices.forwarder_intake import intake_forwarder, verify_forwarder_request
from ..devices.models.device import SMS_GATEWAY_APP
from ..domain_errors import ValidationFailed
from ..errors import flatten_messages
from ..rate_limits import limited
from ..schemas.forwarders import (
    INTAKE_ANSWER,
    SMS_RECEIVED,
    SYSTEM_PING,
    SmsGatewayEventSchema,
    SmsToUrlSchema,
)
from ..sms.ingest import ForwardedText, ingest_texts
from ..sms.records import receiver_number
from .companion import record_ping

blp = Blueprint("forwarders", __name__)
EVENT = SmsGatewayEventSchema()
TEMPLATE = SmsToUrlSchema()
# Per client address: far above a phone's own pace (a phone back online sends its queue at
# once), a bound on anyone hammering the intake.
INTAKE_LIMIT = "120/minute"


@blp.post("/<device_uuid>/sms")
@limited(INTAKE_LIMIT, scope="forwarder-intake")
def receive_forwarded(device_uuid):
    """One forwarded text (or an SMS Gateway ping): stored and matched like any phone's."""
    device = intake_forwarder(device_uuid)
    verify_forwarder_request(device, request.get_data(cache=True), request.headers)
    check_json_body()
    if device.app == SMS_GATEWAY_APP:
        event = loaded(EVENT)
        if event["event"] == SYSTEM_PING:
            with unit_of_work():
                record_ping(device, event["payload"].get("health"))
            return ok({"status": "heartbeat"})
        if event["event"] != SMS_RECEIVED:
            return ok({"status": "ignored"})  # answered 2xx, or the app would retry it 15 times
        text = event_text(event)
    else:
        text = template_text(loaded(TEMPLATE))
    [result] = ingest_texts(device, [text])
    if result["status"] == "rejected":
        raise ValidationFailed.field("text", result["reason"], "empty")
    return ok({"status": result["status"], "server_ref": result["server_ref"]})


def loaded(schema):
    """The JSON body read by the app's schema; a 422 with the fields at fault otherwise."""
    payload = request.get_json(silent=True)
    try:
        return schema.load(payload if isinstance(payload, dict) else {})
    except ma.ValidationError as error:
        raise ValidationFailed(
            "The request has invalid fields.", flatten_messages(error.messages)
        ) from None


def event_text(event):
    """The text of an `sms:received` event; its event id is kept as the text's local id."""
    sms = event["payload"]
    return ForwardedText(
        event["id"],
        sms["sender"],
        sms["message"],
        sms["receivedAt"],
        receiver_number(sms["recipient"]),
    )


def template_text(data):
    """The text of an SMS to URL Forwarder post (its receivedStamp, else its sentStamp)."""
    received_at = data["receivedStamp"] or data["sentStamp"]
    return ForwardedText(None, data["sender"], data["text"], received_at)


def ok(answer):
    """The success envelope around an intake answer, rendered by its schema."""
    return jsonify(INTAKE_ANSWER.dump({"success": True, "data": answer}))
