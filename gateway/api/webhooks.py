"""Webhooks: the delivery log, redelivery and signed test events."""

from ..livemode import current_livemode
from ..schemas.common import envelope
from ..schemas.webhook import DeliveryDetailSchema, DeliverySchema, WebhookTestSchema
from ..webhooks import deliveries
from .auth import caller_brand
from .paging import single
from .resource import resource_blueprint

URL = "webhooks"
blp = resource_blueprint(
    "webhooks", "Webhook deliveries: audit, redeliver, test.", thing="webhook_delivery"
)


@blp.get("/deliveries")
@blp.doc(operationId="listWebhookDeliveries")
@blp.response(200, envelope(DeliverySchema, many=True))
def list_deliveries():
    """The 50 most recent delivery records of your brand and of your key's mode (a test key: its
    test payments'), newest first (listWebhookDeliveries)."""
    return {
        "success": True,
        "data": deliveries.recent_deliveries(caller_brand(), current_livemode()),
    }


@blp.get("/deliveries/<delivery_id>")
@blp.response(200, envelope(DeliveryDetailSchema))
def read_delivery(delivery_id):
    """One delivery record with its event id, next attempt time and every attempt."""
    return single(deliveries.get_delivery(caller_brand(), delivery_id, current_livemode()))


@blp.post("/deliveries/<delivery_id>/retry")
@blp.response(202, envelope(DeliverySchema))
def retry_delivery(delivery_id):
    """Redeliver now; the attempt is made in the background and logged like any other."""
    return single(deliveries.retry_delivery(caller_brand(), delivery_id, current_livemode()))


@blp.post("/tests")
@blp.arguments(WebhookTestSchema)
@blp.response(201, envelope(DeliverySchema))
def send_test(data):
    """Send a signed `webhook.test` event to `url` or, without one, to your brand's webhook URL
    (and to the endpoints of the key's mode that chose `webhook.test` or every event)."""
    return single(deliveries.send_test_webhook(caller_brand(), data.get("url"), current_livemode()))
