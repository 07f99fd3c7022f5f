"""API key request and response shapes; the secret appears in the creation response only."""

import marshmallow as ma
from marshmallow import fields, validate

from ..accounts.models.api_key import SCOPES
from .common import BaseSchema, Livemode, Timestamp


class ApiKeyCreateSchema(BaseSchema):
    """Body of POST /api-keys: a label (alias `name`) and the scopes."""

    label = fields.String(
        required=True,
        validate=validate.Length(min=1, max=100),
        metadata={"description": "Alias: name. Unique among the brand's active keys."},
    )
    scopes = fields.List(
        fields.String(validate=validate.OneOf(SCOPES)),
        load_default=lambda: ["read", "write"],
        validate=validate.Length(min=1),
        metadata={"description": "Defaults to read and write."},
    )

    @ma.pre_load
    def accept_aliases(self, data, **kwargs):
        """`name` is accepted for `label`."""
        if isinstance(data, dict) and "name" in data and "label" not in data:
            data = dict(data)
            data["label"] = data.pop("name")
        return data


class ApiKeySchema(BaseSchema):
    """A key as listed: never its secret, only the prefix that helps recognise it."""

    id = fields.Integer()
    label = fields.String()
    display_prefix = fields.String()
    scopes = fields.Function(
        lambda key: [scope for scope in SCOPES if scope in key.scope_set],
        metadata={"type": "array", "items": {"type": "string", "enum": list(SCOPES)}},
    )
    created_at = Timestamp()
    last_used_at = Timestamp(allow_none=True)
    revoked_at = Timestamp(allow_none=True)
    active = fields.Boolean()
    livemode = Livemode()


class ApiKeyCreatedSchema(ApiKeySchema):
    """`data` of POST /api-keys: the key record plus the full secret, shown this once."""

    key = fields.String(
        attribute="secret", metadata={"description": "The full API key; it cannot be read again."}
    )
