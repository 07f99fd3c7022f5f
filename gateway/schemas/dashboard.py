"""The dashboard summary's response shape."""

from marshmallow import fields

from ..payments.models.payment import PAYMENT_STATUSES
from .common import Amount, BaseSchema, Livemode, Timestamp


def per_currency(description):
    """An object of amounts keyed by ISO 4217 currency code."""
    return fields.Dict(keys=fields.String(), values=Amount(), metadata={"description": description})


StatusCountsSchema = BaseSchema.from_dict(
    {status: fields.Integer() for status in PAYMENT_STATUSES}, name="StatusCounts"
)


class DaySchema(BaseSchema):
    """One local day: completed payments by completion time and their gross volume."""

    date = fields.Date(metadata={"description": "The day in the brand's time zone."})
    count = fields.Integer()
    volume = per_currency("Gross amount of the payments completed that day, per currency.")


class StatusWindowSchema(BaseSchema):
    """Payments created within a window: per status, in all, and the share that was paid."""

    counts = fields.Nested(StatusCountsSchema)
    total_count = fields.Integer()
    success_rate = fields.String(
        allow_none=True, metadata={"description": "As success_rate, within the window."}
    )


class WindowsSchema(BaseSchema):
    """The status figures for today and for the last 30 days, by the brand's local midnights."""

    today = fields.Nested(StatusWindowSchema)
    last_30_days = fields.Nested(StatusWindowSchema)


class DashboardSummarySchema(BaseSchema):
    """`data` of GET /dashboard/summary."""

    timezone = fields.String(
        metadata={"description": "The brand's time zone that days are counted in."}
    )
    generated_at = Timestamp()
    counts = fields.Nested(
        StatusCountsSchema, metadata={"description": "All-time payments per status."}
    )
    total_count = fields.Integer(metadata={"description": "All-time payments in any status."})
    completed_volume = per_currency(
        "Gross amount of completed, partially refunded and refunded payments."
    )
    refunded_volume = per_currency(
        "Amount refunded on those payments, the method fees returned with them included."
    )
    net_volume = per_currency(
        "What the merchant kept of those payments: each one's amount less what was refunded of "
        "it. A refund that returned the method fee too is in refunded_volume in full, but takes "
        "no more than the payment's amount off net_volume, which is never below zero."
    )
    success_rate = fields.String(
        allow_none=True,
        metadata={
            "description": "Percentage, two decimals: payments that were paid (completed, "
            "partially_refunded, "
            "refunded) out of all payments, open ones (created, processing) included; "
            "null when there are no payments.",
            "example": "66.67",
        },
    )
    windows = fields.Nested(
        WindowsSchema,
        metadata={
            "description": "Counts by status and success rate of the payments created today and in "
            "the last 30 days."
        },
    )
    today = fields.Nested(
        DaySchema, metadata={"description": "The current day in the brand's time zone."}
    )
    daily = fields.List(
        fields.Nested(DaySchema),
        metadata={"description": "The last 30 local days, oldest first, today last."},
    )
    livemode = Livemode()
