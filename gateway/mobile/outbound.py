"""Outbound SMS out: the phone leases queued messages, sends them and reports each result."""

from flask import g

from ..clock import isoformat
from ..schemas.mobile import OutboundLeaseArgs, OutboundResultSchema
from ..sms.outbound import lease_outbound_sms
from .auth import device_blueprint
from .companion import report_leased_sms
from .http import ok

blp = device_blueprint("outbound", "Outbound SMS the phone sends for the brand.")


@blp.get("/sms/queues")
@blp.arguments(OutboundLeaseArgs(), location="query")
def lease_messages(args):
    """Lease due messages to this phone for five minutes: {id, to, body}."""
    messages = lease_outbound_sms(g.brand, g.device.uuid, args["limit"])
    return ok(
        {
            "messages": [
                {
                    "id": m.id,
                    "to": m.to_number,
                    "body": m.body,
                    "lease_expires_at": isoformat(m.lease_expires_at),
                }
                for m in messages
            ]
        }
    )


@blp.post("/sms/queues/<message_id>/results")
@blp.arguments(OutboundResultSchema())
def report_result(data, message_id):
    """The phone sent a leased message, or failed to (it is retried with backoff)."""
    message = report_leased_sms(g.device, message_id, data["status"], data["error"])
    return ok(
        {
            "id": message.id,
            "status": message.status,
            "attempts": message.attempts,
            "next_attempt_at": isoformat(message.next_attempt_at)
            if message.status == "queued"
            else None,
        }
    )
