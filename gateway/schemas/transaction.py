"""Transaction response and list-filter shapes."""

from datetime import timezone

from marshmallow import fields, validate

from ..payments.models.payment import PAID_STATUSES
from .common import Amount, BaseSchema, Livemode, PageArgs, Timestamp


class TransactionSchema(BaseSchema):
    """`data` of a transaction: what a completed payment paid and how much went back."""

    id = fields.Integer()
    trx_id = fields.String()
    payment_id = fields.Function(lambda transaction: transaction.payment.public_id)
    amount = Amount()
    amount_refunded = Amount()
    fee = Amount(attribute="payment.fee", metadata={"description": "The method's fee, in taka."})
    currency = fields.String()
    status = fields.String(metadata={"enum": list(PAID_STATUSES)})
    provider = fields.String(allow_none=True)
    provider_trx_id = fields.String(allow_none=True)
    created_at = Timestamp(metadata={"description": "When the payment completed."})
    livemode = Livemode()


class TransactionListArgs(PageArgs):
    """Query of GET /transactions."""

    status = fields.String(validate=validate.OneOf(PAID_STATUSES))
    provider = fields.String(validate=validate.Length(min=1, max=20))
    from_ = fields.AwareDateTime(data_key="from", attribute="from", default_timezone=timezone.utc)
    to = fields.AwareDateTime(default_timezone=timezone.utc)
