"""Fields and schema pieces shared by the API, the checkout and the panel."""

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from decimal import Decimal

import marshmallow as ma
import phonenumbers
from marshmallow import fields, validate

from ..clock import isoformat
from ..db_types import UNSTORABLE_MESSAGE, unstorable
from ..money import AMOUNT_SCHEMA_PATTERN, InvalidAmount, format_amount, parse_amount, plain_decimal

MAX_URL_LENGTH = 2048
PHONE_CHARACTERS = re.compile(r"\+?[0-9 ()./-]{1,30}")
_envelopes = {}


class BaseSchema(ma.Schema):
    """Unknown fields are ignored, as docs/spec/CONTRACT.md says."""

    class Meta:
        unknown = ma.EXCLUDE
        ordered = True

    @ma.pre_load
    def refuse_unstorable_values(self, data, **kwargs):
        """NUL, lone surrogates, NaN and Infinity cannot be stored: a 422 on their field, not a
        500."""
        if isinstance(data, Mapping):
            known = {field.data_key or name for name, field in self.load_fields.items()}
            bad = [name for name in data if name in known and unstorable(data[name])]
            if bad:
                raise ma.ValidationError({name: [UNSTORABLE_MESSAGE] for name in bad})
        return data


class ChangeSchema(BaseSchema):
    """The body of a PATCH: unknown fields are ignored, so a body without a known one is a mistake,
    not a change to nothing (422 on `body`; the document says the same with anyOf-required).
    """

    CHANGE_MESSAGE = "Send at least one field to change."

    @ma.validates_schema
    def changes_something(self, data, **kwargs):
        """At least one known field is sent."""
        if not data:
            raise ma.ValidationError({"body": [self.CHANGE_MESSAGE]})


class Amount(fields.Field):
    """A money amount: a string with at most two decimals in, exactly two decimals out."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).update(
            {"type": "string", "pattern": AMOUNT_SCHEMA_PATTERN, "example": "500.00"}
        )
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


def Livemode():  # noqa: N802 - a field factory, read like a field class
    """`livemode` of an object: true when live, false when made with a test key (gw_test_…)."""
    return fields.Boolean(
        metadata={
            "description": "true for a live object, false for a test one (made with a test key); "
            "a key sees only the objects of its own mode."
        }
    )


def Text(**kwargs):  # noqa: N802 - a field factory, read like a field class
    """Text on output only, written as the database holds it: a Raw field (nothing to convert or
    validate on the way out), documented as a string."""
    kwargs.setdefault("metadata", {}).setdefault("type", "string")
    return fields.Raw(**kwargs)


class HttpUrl(fields.Url):
    """An absolute http(s) URL of at most 2048 characters."""

    def __init__(self, **kwargs):
        super().__init__(
            schemes={"http", "https"},
            require_tld=False,
            validate=validate.Length(max=MAX_URL_LENGTH),
            **kwargs,
        )


class Phone(fields.String):
    """A telephone number in E.164 (`+8801712345678`); a local Bangladeshi number is accepted
    too."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).update(
            {
                "example": "+8801712345678",
                # What the document promises: Bangladeshi mobiles, E.164 or local (narrower than
                # what is read: any country's valid number in E.164 is accepted too).
                "pattern": r"^(\+8801|01)[3-9][0-9]{8}$",
                "description": "E.164, or a local Bangladeshi mobile number.",
            }
        )
        super().__init__(validate=validate.Length(max=20), **kwargs)

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        # phonenumbers would read letters as a keypad's digits ("+880ABC…"): only digits are a
        # number here.
        if not PHONE_CHARACTERS.fullmatch(text):
            raise ma.ValidationError(
                "Not a telephone number; use international format such as +8801712345678."
            )
        try:
            number = phonenumbers.parse(text, "BD")
        except phonenumbers.NumberParseException as error:
            raise ma.ValidationError(
                "Not a telephone number; use international format such as +8801712345678."
            ) from error
        if not phonenumbers.is_valid_number(number):
            raise ma.ValidationError(
                "Not a valid telephone number; use international format such as +8801712345678."
            )
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

    @ma.validates_schema
    def times_have_a_utc_form(self, data, **kwargs):
        """A filter time at the calendar's edge (0001-01-01 at +14:00) has no UTC form to compare: a
        422, not a 500.
        """
        for name, field in self.load_fields.items():
            value = data.get(field.attribute or name)
            if isinstance(value, datetime):
                try:
                    value.astimezone(timezone.utc)
                except OverflowError:
                    raise ma.ValidationError(
                        "The time is out of range.", field.data_key or name
                    ) from None


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


class ErrorDetailSchema(BaseSchema):
    field = fields.String(metadata={"example": "amount"})
    code = fields.String(metadata={"example": "invalid"})
    message = fields.String()


class ErrorSchema(BaseSchema):
    """The error envelope every failed API request answers with (gateway.errors renders it)."""

    success = fields.Boolean(required=True, metadata={"enum": [False]})
    error = fields.Boolean(required=True, metadata={"enum": [True]})
    message = fields.String(required=True)
    code = fields.String(required=True, metadata={"example": "VALIDATION_ERROR"})
    errors = fields.List(
        fields.Nested(ErrorDetailSchema), metadata={"description": "The fields at fault."}
    )
    request_id = fields.String(
        metadata={"description": "On 5xx answers: quote it when reporting the error."}
    )


class DeletedSchema(BaseSchema):
    id = fields.Raw()
    deleted = fields.Boolean()


class Rate(fields.Field):
    """An exchange rate (taka per unit of another currency) as a plain decimal string, "118.5"."""

    def __init__(self, **kwargs):
        kwargs.setdefault("metadata", {}).update({"type": "string", "example": "118.5"})
        super().__init__(**kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        return plain_decimal(value)
