"""API keys: list, generate (secret shown once), revoke; write+admin and a super-administrator
required.
"""

from flask import g

from ..accounts import api_keys
from ..accounts.audit import record_audit
from ..answer_commit import unit_of_work
from ..errors import ApiError
from ..livemode import current_livemode
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
    """Generate a key; the `key` in the answer is the only time its secret is shown.

    A key never hands out a scope it lacks itself (403 INSUFFICIENT_SCOPE), and makes a key of its
    own mode: a test key makes test keys, a live key live ones.
    """
    refuse_scopes_beyond_the_callers(data["scopes"])
    with unit_of_work():
        key, secret = api_keys.generate_key(
            caller_brand(), data["label"], data["scopes"], livemode=current_livemode()
        )
        record_audit(
            g.super_admin,
            "api_key.generate",
            key,
            {
                "label": key.label,
                "scopes": key.scopes,
                "display_prefix": key.display_prefix,
                "livemode": key.livemode,
                **by_api_key(),
            },
        )
    key.secret = secret
    return single(key)


@blp.delete("/<key_id>")
@blp.doc(parameters=[SUPER_ADMIN_HEADER])
@blp.response(200, envelope(ApiKeySchema))
def revoke_key(key_id):
    """Revoke a key: the next request with it fails with 401 INVALID_TOKEN."""
    with unit_of_work():
        key = api_keys.revoke_key(caller_brand(), key_id=key_id)
        record_audit(
            g.super_admin,
            "api_key.revoke",
            key,
            {"label": key.label, "display_prefix": key.display_prefix, **by_api_key()},
        )
    return single(key)


def refuse_scopes_beyond_the_callers(scopes):
    """403 INSUFFICIENT_SCOPE when the new key would hold a scope the calling key does not."""
    missing = set(scopes).difference(g.api_key.scopes.split(","))
    if missing:
        raise ApiError(
            403,
            "INSUFFICIENT_SCOPE",
            f"A key cannot create a key with scope(s) it lacks: {', '.join(sorted(missing))}.",
            [
                {
                    "field": "scopes",
                    "code": "insufficient_scope",
                    "message": "A new key's scopes must be among the calling key's.",
                }
            ],
        )


def by_api_key():
    """The audit details naming the calling key (the API's actor beside the super-administrator)."""
    return {"via": "api", "api_key_id": g.api_key.id}
