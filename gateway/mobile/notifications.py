"""Notifications for the phone, and their acknowledgement."""

from flask import g

from ..answer_commit import unit_of_work
from ..devices.notifications import acknowledge_notifications, pending_notifications
from ..schemas.mobile import AcknowledgeSchema, NotificationSchema
from .auth import device_blueprint
from .http import ok

blp = device_blueprint("notifications", "Notifications for the phone, and their acknowledgement.")


@blp.get("/notifications")
def list_notifications():
    """The oldest unacknowledged notifications for this device."""
    return ok(
        {"notifications": NotificationSchema(many=True).dump(pending_notifications(g.device))}
    )


@blp.post("/notifications/acknowledgements")
@blp.arguments(AcknowledgeSchema())
def acknowledge(data):
    """Mark notifications read; unknown ids are ignored."""
    with unit_of_work():
        acknowledged = acknowledge_notifications(g.device, data["ids"])
    return ok({"acknowledged": acknowledged})
