"""Invoice request and response shapes (the API; the domain checks the same rules again)."""

from decimal import Decimal

import marshmallow as ma
from marshmallow import fields, validate

from ..domain_errors import ValidationFailed
from ..invoices.drafting import as_decimal
from ..invoices.lifecycle import invoice_url
from ..invoices.models.invoice import INVOICE_STATUSES, LANGUAGES
from ..invoices.sending import CHANNELS
from .common import Amount, BaseSchema, ChangeSchema, Livemode, PageArgs, Phone, Timestamp
from .customer import CustomerFieldsSchema

# ASCII digits within the validators' bounds: 0.001 to 999999.999, and 0 to 100.
QUANTITY_DOC = {
    "type": "string",
    "pattern": r"^([1-9][0-9]{0,5}(\.[0-9]{1,3})?|0\.[0-9]{0,2}[1-9])$",
    "example": "2",
}
RATE_DOC = {
    "type": "string",
    "pattern": r"^(100(\.00?)?|[0-9]{1,2}(\.[0-9]{1,2})?)$",
    "example": "15",
}


class DecimalText(fields.Field):
    """A decimal as a string (a JSON number is accepted), with at most `places` decimals, in
    range."""

    def __init__(self, places, minimum, maximum, doc, **kwargs):
        kwargs.setdefault("metadata", {}).update(doc)
        super().__init__(**kwargs)
        self.limits = (places, Decimal(minimum), Decimal(maximum))

    def _deserialize(self, value, attr, data, **kwargs):
        try:
            return as_decimal(value, attr or "value", *self.limits)
        except ValidationFailed as error:
            raise ma.ValidationError(error.message) from error


class InvoiceItemInSchema(BaseSchema):
    """One line item of a request."""

    description = fields.String(required=True, validate=validate.Length(min=1, max=500))
    quantity = DecimalText(3, "0.001", "1000000", QUANTITY_DOC, load_default=Decimal("1"))
    unit_price = Amount(required=True)


class InvoiceFieldsSchema(BaseSchema):
    """The fields a merchant writes; the domain adds totals and a number."""

    customer_id = fields.String(
        validate=validate.Length(min=1, max=254),
        metadata={"description": "An existing customer: id, e-mail or phone."},
    )
    customer = fields.Nested(
        CustomerFieldsSchema, metadata={"description": "Or the customer's details (upserted)."}
    )
    currency = fields.String(validate=validate.Regexp(r"^[A-Za-z]{3}$"))
    items = fields.List(
        fields.Nested(InvoiceItemInSchema), validate=validate.Length(min=1, max=100)
    )
    discount = Amount()
    vat_rate = DecimalText(2, "0", "100", RATE_DOC)
    notes = fields.String(allow_none=True, validate=validate.Length(max=2000))
    due_date = fields.Date(allow_none=True)
    language = fields.String(validate=validate.OneOf(LANGUAGES))


class InvoiceCreateSchema(InvoiceFieldsSchema):
    """Body of POST /invoices."""

    items = fields.List(
        fields.Nested(InvoiceItemInSchema), required=True, validate=validate.Length(min=1, max=100)
    )

    @ma.validates_schema
    def has_customer(self, data, **kwargs):
        """An invoice is for someone: an existing customer or their details."""
        if not data.get("customer_id") and not data.get("customer"):
            message = "Give customer_id or customer {name, email, phone}."
            raise ma.ValidationError({"customer_id": [message]})


class InvoiceUpdateSchema(InvoiceFieldsSchema, ChangeSchema):
    """Body of PATCH /invoices/{invoice_id} (a draft only)."""


class InvoiceSendSchema(BaseSchema):
    """Body of POST /invoices/{invoice_id}/send."""

    channels = fields.List(
        fields.String(validate=validate.OneOf(CHANNELS)),
        load_default=list(CHANNELS),
        validate=validate.Length(min=1),
    )
    language = fields.String(validate=validate.OneOf(LANGUAGES))


class InvoiceItemSchema(BaseSchema):
    description = fields.String()
    quantity = fields.Function(
        lambda item: format(item.quantity.normalize(), "f"), metadata=QUANTITY_DOC
    )
    unit_price = Amount()
    amount = Amount()


class InvoiceCustomerSchema(BaseSchema):
    id = fields.Integer()
    name = fields.String(allow_none=True)
    email = fields.String(allow_none=True)
    phone = Phone(allow_none=True)


class InvoiceSchema(BaseSchema):
    """`data` of an invoice response."""

    invoice_id = fields.String(attribute="public_id")
    number = fields.String(attribute="number_text")
    status = fields.String()
    currency = fields.String()
    language = fields.String()
    customer = fields.Nested(InvoiceCustomerSchema)
    items = fields.List(fields.Nested(InvoiceItemSchema))
    subtotal = Amount()
    discount = Amount()
    vat_rate = fields.Function(
        lambda invoice: format(invoice.vat_rate.normalize(), "f"), metadata=RATE_DOC
    )
    vat_amount = Amount()
    total = Amount()
    notes = fields.String(allow_none=True)
    due_date = fields.Date(allow_none=True)
    url = fields.Function(invoice_url, metadata={"description": "The customer's page."})
    reminder_count = fields.Integer()
    created_at = Timestamp()
    sent_at = Timestamp(allow_none=True)
    overdue_at = Timestamp(allow_none=True)
    paid_at = Timestamp(allow_none=True)
    voided_at = Timestamp(allow_none=True)
    livemode = Livemode()


class InvoiceListArgs(PageArgs):
    """Query of GET /invoices."""

    status = fields.String(validate=validate.OneOf(INVOICE_STATUSES))
    q = fields.String(
        validate=validate.Length(min=1, max=100),
        metadata={"description": "Invoice number, or the customer's name, e-mail or phone."},
    )
