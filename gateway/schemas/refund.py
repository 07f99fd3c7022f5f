"""Refund request and response shapes (docs/spec/merchant-api.md 2.5 and docs/spec/CONTRACT.md)."""

from datetime import timezone

import marshmallow as ma
from marshmallow import fields, validate

from ..db_types import MAX_ROW_ID
from .common import Amount, BaseSchema, Livemode, PageArgs, Timestamp, positive_amount

TRX_ID = dict(validate=validate.Length(min=1, max=20), metadata={"example": "TRXAB12CD34EF56"})


class RefundCreateSchema(BaseSchema):
    """Body of POST /refunds: `trx_id` or `transaction_id`, `amount` optional (default: the
    remainder).
    """

    trx_id = fields.String(**TRX_ID)
    transaction_id = fields.Integer(
        strict=True,
        validate=validate.Range(min=1, max=MAX_ROW_ID),
        metadata={"description": "Internal transaction id, instead of trx_id."},
    )
    amount = Amount(
        allow_none=True,
        validate=positive_amount(),
        metadata={"description": "Omitted or null: refund everything that remains."},
    )
    reason = fields.String(allow_none=True, validate=validate.Length(max=500))

    @ma.validates_schema
    def one_transaction_reference(self, data, **kwargs):
        """Exactly one of trx_id and transaction_id names the transaction."""
        if "trx_id" in data and "transaction_id" in data:
            raise ma.ValidationError("Send trx_id or transaction_id, not both.", "transaction_id")
        if "trx_id" not in data and "transaction_id" not in data:
            raise ma.ValidationError("Missing data for required field.", "trx_id")


class RefundSchema(BaseSchema):
    """`data` of a refund: its id, the transaction it returns money from, and status `completed`."""

    id = fields.Integer()
    trx_id = fields.Function(lambda refund: refund.transaction.trx_id)
    transaction_id = fields.Integer()
    amount = Amount()
    currency = fields.Function(lambda refund: refund.transaction.currency)
    reason = fields.String(allow_none=True)
    status = fields.String(metadata={"enum": ["completed"]})
    created_at = Timestamp()
    livemode = Livemode()


class RefundListArgs(PageArgs):
    """Query of GET /refunds."""

    trx_id = fields.String(**TRX_ID)
    from_ = fields.AwareDateTime(data_key="from", attribute="from", default_timezone=timezone.utc)
    to = fields.AwareDateTime(default_timezone=timezone.utc)
