"""Webhook endpoints: several URLs per brand and mode, each with its chosen events and its own
secret (shown once: in the creation and rotation answers, never stored with an idempotency key)."""

from ..livemode import current_livemode
from ..schemas.common import DeletedSchema, envelope
from ..schemas.webhook_endpoint import (
    WebhookEndpointCreateSchema,
    WebhookEndpointListArgs,
    WebhookEndpointSchema,
    WebhookEndpointSecretSchema,
    WebhookEndpointUpdateSchema,
)
from ..webhooks import endpoints
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "webhook-endpoints"
blp = resource_blueprint(
    "webhook-endpoints",
    "Where webhooks go beyond a payment's callback_url: URLs with chosen events and own secrets.",
    idempotent=False,
    thing="webhook_endpoint",
)


def own(endpoint_id):
    """The calling brand's endpoint of the key's mode."""
    return endpoints.get_endpoint(caller_brand(), endpoint_id, current_livemode())


def with_secret(endpoint, secret):
    """The endpoint's answer with its secret, this once."""
    endpoint.secret = secret
    return single(endpoint)


@blp.post("")
@blp.arguments(WebhookEndpointCreateSchema())
@blp.response(201, envelope(WebhookEndpointSecretSchema))
def create_endpoint(data):
    """Add an endpoint; live or test as the key is. `secret` in the answer is shown only here."""
    endpoint, secret = endpoints.create_endpoint(
        caller_brand(),
        current_livemode(),
        data["url"],
        data["enabled_events"],
        data.get("description"),
        data.get("enabled", True),
    )
    return with_secret(endpoint, secret)


@blp.get("")
@blp.arguments(WebhookEndpointListArgs(), location="query")
@blp.response(200, envelope(WebhookEndpointSchema, many=True))
def list_endpoints(args):
    """Your endpoints of the key's mode, newest first."""
    rows, meta = paginate(endpoints.endpoints_query(caller_brand(), current_livemode()), args)
    return listing(rows, meta)


@blp.get("/<endpoint_id>")
@blp.response(200, envelope(WebhookEndpointSchema))
def read_endpoint(endpoint_id):
    """One endpoint, without its secret."""
    return single(own(endpoint_id))


@blp.patch("/<endpoint_id>")
@blp.arguments(WebhookEndpointUpdateSchema())
@blp.response(200, envelope(WebhookEndpointSchema))
def update_endpoint(data, endpoint_id):
    """Change the URL, the events, the description, or enable or disable it."""
    endpoint = own(endpoint_id)
    endpoints.update_endpoint(endpoint, data)
    return single(endpoint)


@blp.delete("/<endpoint_id>")
@blp.response(200, envelope(DeletedSchema))
def delete_endpoint(endpoint_id):
    """Delete an endpoint: nothing more is sent to it, retries included; its records stay."""
    endpoint = endpoints.delete_endpoint(own(endpoint_id))
    return single({"id": endpoint.public_id, "deleted": True})


@blp.post("/<endpoint_id>/rotate-secret")
@blp.response(200, envelope(WebhookEndpointSecretSchema))
def rotate_secret(endpoint_id):
    """A new secret, shown here once; the replaced one also signs for WEBHOOK_SECRET_OVERLAP
    (X-Service-Signature-Previous), as the brand's secret does."""
    endpoint = own(endpoint_id)
    secret = endpoints.rotate_endpoint_secret(endpoint)
    return with_secret(endpoint, secret)
