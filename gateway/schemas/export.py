"""Query of the CSV exports: a range of local calendar days."""

import marshmallow as ma
from marshmallow import fields

from .common import BaseSchema

MAX_DAYS = 3660
RANGE_RULE = (
    "`to` is not before `from`, and at most ten years (3660 days) after it; otherwise the answer "
    "is 422 VALIDATION_ERROR on the field `to`."
)


class ExportArgs(BaseSchema):
    """`from` and `to`: days (YYYY-MM-DD) in the brand's time zone, both included; either may be
    left out.
    """

    from_ = fields.Date(
        data_key="from",
        attribute="from",
        metadata={
            "description": f"First day, in the brand's time zone. {RANGE_RULE}",
            "example": "2025-01-01",
        },
    )
    to = fields.Date(
        metadata={
            "description": f"Last day (included), in the brand's time zone. {RANGE_RULE}",
            "example": "2025-01-31",
        }
    )

    @ma.validates_schema
    def range_is_sane(self, data, **kwargs):
        """`to` not before `from`, and at most ten years apart."""
        start, end = data.get("from"), data.get("to")
        if start and end and end < start:
            raise ma.ValidationError("`to` must not be before `from`.", "to")
        if start and end and (end - start).days > MAX_DAYS:
            raise ma.ValidationError("The range is at most ten years.", "to")
