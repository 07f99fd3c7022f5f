"""Notifications for the phone, and their acknowledgement."""

from flask import g

from ..answer_commit import unit_of_work
from ..api.paging import single
from ..devices.notifications import (
    PAGE,
    acknowledge_notifications,
    count_pending,
    pending_notifications,
)
from ..schemas.common import envelope
from ..schemas.mobile import AcknowledgeSchema
from ..schemas.mobile_answers import AcknowledgedSchema, NotificationFeedSchema
from .auth import device_blueprint

blp = device_blueprint("notifications", "Notifications for the phone, and their acknowledgement.")


@blp.get("/notifications")
@blp.response(200, NotificationFeedSchema)
def list_notifications():
    """The oldest unacknowledged notifications for this device: `data` is the list."""
    return {
        "success": True,
        "data": pending_notifications(g.device),
        "meta": {"unacknowledged": count_pending(g.device), "limit": PAGE},
    }


@blp.post("/notifications/acknowledgements")
@blp.arguments(AcknowledgeSchema())
@blp.response(200, envelope(AcknowledgedSchema))
def acknowledge(data):
    """Mark notifications read; unknown ids are ignored."""
    with unit_of_work():
        acknowledged = acknowledge_notifications(g.device, data["ids"])
    return single({"acknowledged": acknowledged})
