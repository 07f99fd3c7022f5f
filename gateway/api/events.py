"""Events: every event the gateway sends, kept 30 days; listed, read, and sent again."""

from ..livemode import current_livemode
from ..schemas.common import envelope
from ..schemas.event import EventListArgs, EventRedeliverSchema, EventSchema
from ..schemas.webhook import DeliverySchema
from ..webhooks import event_log
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "events"
blp = resource_blueprint("events", "Events, each with the webhook body it was sent as.")


@blp.get("")
@blp.arguments(EventListArgs(), location="query")
@blp.response(200, envelope(EventSchema, many=True))
def list_events(args):
    """Your events of the key's mode (live or test), newest first; by `type` and `from`/`to`."""
    rows, meta = paginate(event_log.events_query(caller_brand(), current_livemode(), args), args)
    return listing(rows, meta)


@blp.get("/<event_id>")
@blp.response(200, envelope(EventSchema))
def read_event(event_id):
    """One event by its id, the `id` of the webhook body it was sent as."""
    return single(event_log.get_event(caller_brand(), current_livemode(), event_id))


@blp.post("/<event_id>/redeliver")
@blp.arguments(EventRedeliverSchema(), required=False)
@blp.response(202, envelope(DeliverySchema, many=True))
def redeliver_event(data, event_id):
    """Send the event again now, to one endpoint or to every place it goes; the delivery records.

    Without `endpoint_id`: to every enabled endpoint that chooses the event now and to the URL it
    first went to. 409 INVALID_STATE when there is nowhere to send it, or the one endpoint asked
    for is disabled or has an attempt in flight.
    """
    deliveries = event_log.redeliver_event(
        caller_brand(), current_livemode(), event_id, (data or {}).get("endpoint_id")
    )
    return {"success": True, "data": deliveries}
