"""Test mode's request shapes: a test payment's simulated outcome
(docs/testing-your-integration.md)."""

from marshmallow import fields, validate

from ..testmode.simulate import OUTCOMES
from .common import BaseSchema


class SimulateSchema(BaseSchema):
    """Body of POST /test/payments/{payment_id}/simulate."""

    outcome = fields.String(
        required=True,
        validate=validate.OneOf(OUTCOMES),
        metadata={
            "description": "paid: a matching SMS completes the payment (payment.completed); "
            "mismatch: an SMS one taka short holds it for review; expired: it expires now "
            "(payment.expired). Each takes the real SMS, matching and webhook path.",
            "example": "paid",
        },
    )
