"""Payment link request and response shapes, shared by the API and the panel."""

from datetime import timezone

from marshmallow import fields, validate

from ..links.links import link_url
from ..links.models.link import FIELD_KINDS, LINK_STATUSES
from .common import Amount, BaseSchema, ChangeSchema, HttpUrl, Livemode, PageArgs, Timestamp

CURRENCY = validate.Regexp(r"^[A-Z]{3}$", error="Currency must be a three-letter ISO 4217 code.")


class CustomFieldSchema(BaseSchema):
    """One question the link page asks: name, phone, address or free text."""

    kind = fields.String(required=True, validate=validate.OneOf(FIELD_KINDS))
    label = fields.String(allow_none=True, validate=validate.Length(max=100))
    required = fields.Boolean(load_default=False)
    key = fields.String(dump_only=True, metadata={"description": "The answer's key."})


class PaymentLinkFieldsSchema(BaseSchema):
    """The fields of a link a merchant writes."""

    title = fields.String(validate=validate.Length(min=1, max=200))
    description = fields.String(allow_none=True, validate=validate.Length(max=2000))
    slug = fields.String(
        validate=validate.Length(min=3, max=64),
        metadata={
            "description": "The address /pay/<slug>: a-z, 0-9 and hyphens.",
            "example": "eid-sale",
        },
    )
    amount = Amount(
        allow_none=True, metadata={"description": "Fixed amount; null lets the customer enter one."}
    )
    min_amount = Amount(allow_none=True)
    max_amount = Amount(allow_none=True)
    custom_fields = fields.List(fields.Nested(CustomFieldSchema), validate=validate.Length(max=10))
    usage_limit = fields.Integer(
        allow_none=True,
        strict=True,
        validate=validate.Range(min=1, max=1_000_000),
        metadata={
            "description": "Most payments the link takes (open ones count until they close)."
        },
    )
    expires_at = fields.AwareDateTime(allow_none=True, default_timezone=timezone.utc)
    callback_url = HttpUrl(allow_none=True)
    redirect_url = HttpUrl(allow_none=True)


class PaymentLinkUpdateSchema(PaymentLinkFieldsSchema, ChangeSchema):
    """Body of PATCH /payment-links/{id}: at least one of the fields to change."""


class PaymentLinkCreateSchema(PaymentLinkFieldsSchema):
    """Body of POST /payment-links."""

    title = fields.String(required=True, validate=validate.Length(min=1, max=200))
    currency = fields.String(
        validate=CURRENCY, metadata={"description": "Default: the brand's first."}
    )


class PaymentLinkSchema(BaseSchema):
    """`data` of a payment link."""

    id = fields.String(attribute="public_id")
    slug = fields.String()
    url = fields.Function(link_url)
    title = fields.String()
    description = fields.String(allow_none=True)
    currency = fields.String()
    amount = Amount(allow_none=True)
    min_amount = Amount(allow_none=True)
    max_amount = Amount(allow_none=True)
    custom_fields = fields.List(fields.Nested(CustomFieldSchema))
    usage_limit = fields.Integer(allow_none=True)
    used_count = fields.Integer(metadata={"description": "Slots held by open and paid payments."})
    paid_count = fields.Integer()
    paid_total = Amount()
    expires_at = Timestamp(allow_none=True)
    status = fields.String(metadata={"enum": list(LINK_STATUSES)})
    callback_url = fields.String(allow_none=True)
    redirect_url = fields.String(allow_none=True)
    created_at = Timestamp()
    disabled_at = Timestamp(allow_none=True)
    livemode = Livemode()


class PaymentLinkListArgs(PageArgs):
    """Query of GET /payment-links."""

    status = fields.String(validate=validate.OneOf(LINK_STATUSES))
