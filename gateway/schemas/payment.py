"""Payment request and response shapes, shared by the API, the checkout and the panel."""

from datetime import timezone

import marshmallow as ma
from flask import current_app
from marshmallow import fields, validate

from ..payments.lifecycle import checkout_url
from ..payments.models.payment import PAYMENT_STATUSES
from .common import (
    Amount,
    BaseSchema,
    HttpUrl,
    Livemode,
    PageArgs,
    Phone,
    Rate,
    Text,
    Timestamp,
    positive_amount,
)

METADATA_MAX_KEYS = 20


class PaymentCreateSchema(BaseSchema):
    """Body of POST /payments."""

    amount = Amount(required=True)
    currency = fields.String(
        required=True,
        validate=validate.Regexp(
            r"^[A-Za-z]{3}$", error="Currency must be a three-letter ISO 4217 code."
        ),
    )
    reference = fields.String(validate=validate.Length(min=1, max=255))
    callback_url = HttpUrl()
    redirect_url = HttpUrl()
    cancel_url = HttpUrl()
    customer_name = fields.String(validate=validate.Length(max=200))
    customer_mail = fields.Email(
        validate=validate.Length(max=254), metadata={"description": "Alias: customer_email."}
    )
    customer_phone = Phone()
    metadata = fields.Dict(
        keys=fields.String(validate=validate.Length(min=1, max=40)),
        values=fields.Raw(allow_none=True),
    )

    @ma.pre_load
    def accept_aliases(self, data, **kwargs):
        """`customer_email` is accepted for `customer_mail`."""
        if isinstance(data, dict) and "customer_email" in data and "customer_mail" not in data:
            data = dict(data)
            data["customer_mail"] = data.pop("customer_email")
        return data

    @ma.validates("amount")
    def amount_in_bounds(self, value, **kwargs):
        positive_amount(current_app.config["MAX_AMOUNT"])(value)

    @ma.validates("metadata")
    def metadata_is_small(self, value, **kwargs):
        if len(value) > METADATA_MAX_KEYS:
            raise ma.ValidationError(f"At most {METADATA_MAX_KEYS} metadata keys.")
        for item in value.values():
            if isinstance(item, (dict, list)) or (isinstance(item, str) and len(item) > 500):
                raise ma.ValidationError(
                    "Metadata values must be strings of at most 500 characters, numbers or "
                    "booleans."
                )

    @ma.post_load
    def normalise(self, data, **kwargs):
        data["currency"] = data["currency"].upper()
        return data


class PaymentHeadSchema(BaseSchema):
    """The fields every payment answer starts with (docs/spec/merchant-api.md 2.3)."""

    payment_id = Text(attribute="public_id")
    token = Text()
    checkout_url = fields.Method("get_checkout_url")
    status = Text()

    def get_checkout_url(self, payment):
        return checkout_url(payment)

    # Plain attribute access (marshmallow's documented hook, here the builtin itself): a view row
    # answers by name, where marshmallow's item lookup first would raise.
    get_attribute = staticmethod(getattr)


class PaymentCreatedSchema(PaymentHeadSchema):
    """`data` of the POST /payments response (docs/spec/merchant-api.md 2.3), and its mode last."""

    livemode = Livemode()


def customer_summary(payment):
    """The customer as the payment recorded them; written out, since a nested schema's dump costs
    more on every read.
    """
    return {
        "name": payment.customer_name,
        "email": payment.customer_email,
        "phone": payment.customer_phone,
    }


# The document's shape of `customer` (a Function field documents nothing by itself).
CUSTOMER_SUMMARY_DOC = {
    "type": "object",
    "properties": {
        name: {"type": "string", "nullable": True} for name in ("name", "email", "phone")
    },
}


class PaymentSchema(PaymentHeadSchema):
    """`data` of GET /payments/{payment_id} (docs/spec/merchant-api.md 2.4 and
    docs/spec/CONTRACT.md), from a Payment or a payment view row; after the documented fields,
    what it collects in taka (payments/amounts.py), then its mode last.
    """

    trx_id = Text(allow_none=True)
    reference = Text(allow_none=True)
    amount = Amount()
    amount_refunded = Amount()
    fee = Amount(metadata={"description": "The chosen method's fee, in taka."})
    currency = Text()
    provider = Text(allow_none=True)
    provider_trx_id = Text(allow_none=True)
    review_reason = Text(allow_none=True)
    created_at = Timestamp()
    completed_at = Timestamp(allow_none=True)
    expires_at = Timestamp()
    customer = fields.Function(customer_summary, metadata=CUSTOMER_SUMMARY_DOC)
    metadata = fields.Raw(attribute="metadata_json", allow_none=True)
    amount_paid = Amount(
        allow_none=True,
        metadata={"description": "What the customer sends, in taka: amount_bdt + fee."},
    )
    amount_bdt = Amount(
        allow_none=True,
        metadata={"description": "The amount in taka at exchange_rate (null: no rate known)."},
    )
    exchange_rate = Rate(
        allow_none=True,
        metadata={"description": "Taka per unit of currency, fixed at creation (BDT: null)."},
    )
    livemode = Livemode()


class PaymentListArgs(PageArgs):
    """Query of GET /payments."""

    status = fields.String(validate=validate.OneOf(PAYMENT_STATUSES))
    reference = fields.String(validate=validate.Length(min=1, max=255))
    from_ = fields.AwareDateTime(data_key="from", attribute="from", default_timezone=timezone.utc)
    to = fields.AwareDateTime(default_timezone=timezone.utc)
    payment_link = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={"description": "Only payments made through this payment link (id or slug)."},
    )
    invoice = fields.String(
        validate=validate.Length(min=1, max=36),
        metadata={"description": "Only the payments of this invoice (its invoice_id)."},
    )
