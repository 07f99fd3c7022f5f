"""Fields and schema pieces shared by the API, the checkout and the panel."""
from decimal import Decimal

import marshmallow as ma
import phonenumbers
from marshmallow import fields, validate

from ..clock import isoformat
from ..money import InvalidAmount, format_amount, parse_amount

MAX_URL_LENGTH = 2048
_envelopes = {}


class BaseSchema(ma.Schema):
    """Unknown fields are ignored, as CONTRACT.md says."""

    class Meta:
        unknown = ma.EXCLUDE
        ordered = True


class Amount(fields.Field):
    """A money amount: a string with at most two decimals in, exactly two decimals out."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).update({"type": "string", "pattern": r"^\d+(\.\d{1,2})?$",
                                                   "example": "500.00"})
        super().__init__(**kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        return format_amount(value)

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return parse_amount(value)
        except InvalidAmount as error:
            raise ma.ValidationError(str(error)) from error


class Timestamp(fields.Field):
    """A UTC datetime rendered as ISO 8601 with its offset."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).update({"type": "string", "format": "date-time"})
        super().__init__(**kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        return isoformat(value)


class HttpUrl(fields.Url):
    """An absolute http(s) URL of at most 2048 characters."""

    def __init__(self, **kwargs):
        super().__init__(schemes={"http", "https"}, require_tld=False,
                         validate=validate.Length(max=MAX_URL_LENGTH), **kwargs)


class Phone(fields.String):
    """A telephone number in E.164 (`+8801712345678`); a local Bangladeshi number is accepted too."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).update({"example": "+8801712345678"})
        super().__init__(validate=validate.Length(max=20), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        try:
            number = phonenumbers.parse(text, "BD")
        except phonenumbers.NumberParseException as error:
            raise ma.ValidationError("Not a telephone number; use international format such as +8801712345678.") from error
        if not phonenumbers.is_valid_number(number):
            raise ma.ValidationError("Not a valid telephone number; use international format such as +8801712345678.")
        return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def positive_amount(maximum=None):
    """A validator: more than zero and, when given, at most `maximum`."""
    def check(value):
        if value <= 0:
            raise ma.ValidationError("Amount must be greater than zero.")
        if maximum is not None and value > Decimal(maximum):
            raise ma.ValidationError(f"Amount must not exceed {format_amount(maximum)}.")
    return check


class PageArgs(BaseSchema):
    """`page` and `per_page` (default 25, at most 100)."""

    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100000))
    per_page = fields.Integer(load_default=25, validate=validate.Range(min=1, max=100))


class PageMeta(BaseSchema):
    page = fields.Integer()
    per_page = fields.Integer()
    total = fields.Integer()
    total_pages = fields.Integer()


def envelope(schema_cls, many=False):
    """`{success, data, meta?}` around a schema, named for the OpenAPI document."""
    name = f"{schema_cls.__name__.removesuffix('Schema')}{'List' if many else ''}Envelope"
    if name not in _envelopes:
        attrs = {
            "success": fields.Boolean(required=True),
            "data": fields.Nested(schema_cls, many=many, required=True),
        }
        if many:
            attrs["meta"] = fields.Nested(PageMeta)
        _envelopes[name] = type(name, (BaseSchema,), attrs)
    return _envelopes[name]


class DeletedSchema(BaseSchema):
    id = fields.Raw()
    deleted = fields.Boolean()
