"""API keys: list, generate (secret shown once), revoke; write+admin and a super-administrator required."""

from ..accounts import api_keys
from ..schemas.api_key import ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeySchema
from ..schemas.common import envelope
from .auth import caller_brand
from .paging import single
from .resource import resource_blueprint

URL = "api-keys"
SUPER_ADMIN_HEADER = {
    "in": "header",
    "name": "X-Super-Admin-Email",
    "required": True,
    "schema": {"type": "string", "format": "email"},
    "description": "The address of an active platform super-administrator.",
}
blp = resource_blueprint(
    "api-keys",
    "The brand's API keys. Needs the write and admin scopes and the "
    "X-Super-Admin-Email header of an active super-administrator.",
    extra_scopes=("write", "admin"),
    super_admin=True,
    idempotent=False,
)


@blp.get("")
@blp.doc(parameters=[SUPER_ADMIN_HEADER])
@blp.response(200, envelope(ApiKeySchema, many=True))
def list_keys():
    """Every key of the brand, newest first, revoked ones included."""
    return single(api_keys.list_keys(caller_brand()))


@blp.post("")
@blp.doc(parameters=[SUPER_ADMIN_HEADER])
@blp.arguments(ApiKeyCreateSchema)
@blp.response(201, envelope(ApiKeyCreatedSchema))
def create_key(data):
    """Generate a key; the `key` in the answer is the only time its secret is shown."""
    key, secret = api_keys.generate_key(caller_brand(), data["label"], data["scopes"])
    key.secret = secret
    return single(key)


@blp.delete("/<key_id>")
@blp.doc(parameters=[SUPER_ADMIN_HEADER])
@blp.response(200, envelope(ApiKeySchema))
def revoke_key(key_id):
    """Revoke a key: the next request with it fails with 401 INVALID_TOKEN."""
    return single(api_keys.revoke_key(caller_brand(), key_id=key_id))
