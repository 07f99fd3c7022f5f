"""Customer profile request and response shapes."""

import marshmallow as ma
from marshmallow import fields, validate

from .common import Amount, BaseSchema, ChangeSchema, Livemode, PageArgs, Phone, Timestamp
from .dashboard import per_currency

CONTACT_MESSAGE = "Give an e-mail address or a telephone number."
CHANGE_MESSAGE = "Send at least one of name, email and phone."


class CustomerFieldsSchema(BaseSchema):
    """The profile fields a merchant writes; null clears one."""

    name = fields.String(allow_none=True, validate=validate.Length(max=200))
    email = fields.Email(allow_none=True, validate=validate.Length(max=254))
    phone = Phone(allow_none=True)


class CustomerUpdateSchema(CustomerFieldsSchema, ChangeSchema):
    """Body of PATCH /customers/{id}: at least one of the profile fields."""

    CHANGE_MESSAGE = CHANGE_MESSAGE


class CustomerCreateSchema(CustomerFieldsSchema):
    """Body of POST /customers: an e-mail or a phone number at least."""

    @ma.validates_schema
    def has_contact(self, data, **kwargs):
        """A profile nobody can be matched to is useless: ask for one way to reach the customer."""
        if not data.get("email") and not data.get("phone"):
            raise ma.ValidationError({"email": [CONTACT_MESSAGE], "phone": [CONTACT_MESSAGE]})


class CustomerSchema(BaseSchema):
    """`data` of a customer response: the profile and what the customer has paid."""

    id = fields.Integer()
    name = fields.String(allow_none=True)
    email = fields.String(allow_none=True)
    phone = fields.String(allow_none=True)
    created_at = Timestamp()
    payment_count = fields.Integer()
    total_paid = Amount(
        metadata={
            "description": "What the customer's paid payments came to, refunds taken off, in the "
            "brand's first currency; every currency is in total_paid_by_currency."
        }
    )
    total_paid_by_currency = per_currency(
        "What the customer's paid payments (completed, partially_refunded, refunded) came to, "
        "refunds taken off (a refunded method fee is not), in each currency they paid in."
    )
    livemode = Livemode()


class CustomerListArgs(PageArgs):
    """Query of GET /customers."""

    email = fields.String(validate=validate.Length(min=1, max=254))
    phone = Phone()
    q = fields.String(
        validate=validate.Length(min=1, max=200),
        metadata={"description": "Part of the name, e-mail or phone number."},
    )
