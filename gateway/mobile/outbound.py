"""Outbound SMS out: the phone leases queued messages, sends them and reports each result."""
from flask import g

from ..clock import isoformat
from ..schemas.mobile import OutboundLeaseArgs, OutboundResultSchema
from .companion import report_leased_sms
from ..sms.outbound import lease_outbound_sms
from .auth import device_blueprint
from .http import load, ok

blp = device_blueprint("outbound")


@blp.get("/sms/queues")
def lease_messages():
    """Lease due messages to this phone for five minutes: {id, to, body}."""
    limit = load(OutboundLeaseArgs, location="query")["limit"]
    messages = lease_outbound_sms(g.brand, g.device.uuid, limit)
    return ok({"messages": [{"id": m.id, "to": m.to_number, "body": m.body,
                             "lease_expires_at": isoformat(m.lease_expires_at)} for m in messages]})


@blp.post("/sms/queues/<message_id>/results")
def report_result(message_id):
    """The phone sent a leased message, or failed to (it is retried with backoff)."""
    data = load(OutboundResultSchema)
    message = report_leased_sms(g.device, message_id, data["status"], data["error"])
    return ok({"id": message.id, "status": message.status, "attempts": message.attempts,
               "next_attempt_at": isoformat(message.next_attempt_at) if message.status == "queued" else None})
