"""The device itself: heartbeats and unpairing."""

from flask import g

from ..answer_commit import unit_of_work
from ..schemas.mobile import HeartbeatSchema
from .auth import device_blueprint
from .companion import record_heartbeat, unpair_device
from .http import ok

blp = device_blueprint("devices", "The paired phone itself: heartbeats and unpairing.")


@blp.post("/devices/heartbeats")
@blp.arguments(
    HeartbeatSchema(), required=False
)  # every field is optional: no body at all is a heartbeat
def heartbeat(data):
    """The phone is alive; store its battery and network, answer with what changed."""
    with unit_of_work():
        answer = record_heartbeat(g.device, data)
    return ok(answer)


@blp.delete("/devices/<ref>")
def unpair(ref):
    """Unpair this device (`self` or its own uuid); its tokens stop working at once."""
    with unit_of_work():
        answer = unpair_device(g.device, ref)
    return ok(answer)
