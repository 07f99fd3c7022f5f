"""Outbound SMS out: the phone leases queued messages, sends them and reports each result."""

from flask import g

from ..api.paging import single
from ..schemas.common import envelope
from ..schemas.mobile import OutboundLeaseArgs, OutboundResultSchema
from ..schemas.mobile_answers import LeasedSmsListSchema, OutboundReportSchema
from ..sms.outbound import lease_outbound_sms
from .auth import device_blueprint
from .companion import report_leased_sms

blp = device_blueprint("outbound", "Outbound SMS the phone sends for the brand.")


@blp.get("/sms/queues")
@blp.arguments(OutboundLeaseArgs(), location="query")
@blp.response(200, envelope(LeasedSmsListSchema))
def lease_messages(args):
    """Lease due messages to this phone for five minutes: {id, to, body}."""
    return single({"messages": lease_outbound_sms(g.brand, g.device.uuid, args["limit"])})


@blp.post("/sms/queues/<message_id>/results")
@blp.arguments(OutboundResultSchema())
@blp.response(200, envelope(OutboundReportSchema))
def report_result(data, message_id):
    """The phone sent a leased message, or failed to (it is retried with backoff)."""
    return single(report_leased_sms(g.device, message_id, data["status"], data["error"]))
