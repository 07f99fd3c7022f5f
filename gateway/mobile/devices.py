"""The device itself: heartbeats and unpairing."""

from flask import g

from ..answer_commit import unit_of_work
from ..api.paging import single
from ..schemas.common import envelope
from ..schemas.mobile import HeartbeatSchema
from ..schemas.mobile_answers import HeartbeatAnswerSchema, UnpairedSchema
from .auth import device_blueprint
from .companion import record_heartbeat, unpair_device

blp = device_blueprint("devices", "The paired phone itself: heartbeats and unpairing.")


@blp.post("/devices/heartbeats")
@blp.arguments(
    HeartbeatSchema(), required=False
)  # every field is optional: no body at all is a heartbeat
@blp.response(200, envelope(HeartbeatAnswerSchema))
def heartbeat(data):
    """The phone is alive; store its battery and network, answer with what changed."""
    with unit_of_work():
        answer = record_heartbeat(g.device, data)
    return single(answer)


@blp.delete("/devices/<device_ref:ref>")
@blp.response(200, envelope(UnpairedSchema))
def unpair(ref):
    """Unpair this device (`self` or its own uuid); its tokens stop working at once."""
    with unit_of_work():
        answer = unpair_device(g.device, ref)
    return single(answer)
