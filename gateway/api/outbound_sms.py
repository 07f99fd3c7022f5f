"""The outbound SMS queue: list, queue a message, retry a failed one."""

from ..livemode import current_livemode
from ..schemas.common import envelope
from ..schemas.outbound_sms import OutboundSmsCreateSchema, OutboundSmsListArgs, OutboundSmsSchema
from ..sms import outbound as outbound_sms
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "sms/outbound"
blp = resource_blueprint(
    "outbound_sms",
    "Outbound SMS sent by a companion device or an SMS provider.",
    thing="outbound_sms",
)


@blp.get("")
@blp.arguments(OutboundSmsListArgs, location="query")
@blp.response(200, envelope(OutboundSmsSchema, many=True))
def list_outbound_sms(args):
    """The brand's outbound messages of the key's mode, newest first."""
    query = outbound_sms.list_outbound_sms_query(caller_brand(), args, current_livemode())
    return listing(*paginate(query, args))


@blp.post("")
@blp.arguments(OutboundSmsCreateSchema)
@blp.response(201, envelope(OutboundSmsSchema))
def queue_outbound_sms(data):
    """Queue a message; it leaves through a paired device or the configured SMS provider."""
    return single(outbound_sms.create_outbound_sms(caller_brand(), data, current_livemode()))


@blp.post("/<message_id>/retry")
@blp.response(200, envelope(OutboundSmsSchema))
def retry_outbound_sms(message_id):
    """Queue a failed message again (409 INVALID_STATE from any other status)."""
    return single(outbound_sms.retry_outbound_sms(caller_brand(), message_id, current_livemode()))
