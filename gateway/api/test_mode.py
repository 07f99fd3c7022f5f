"""Test mode: a test payment's outcome simulated through the real path, for a test key only
(docs/testing-your-integration.md)."""

from ..errors import ApiError
from ..livemode import current_livemode
from ..payments import lifecycle as payments
from ..schemas.common import envelope
from ..schemas.payment import PaymentSchema
from ..schemas.test_mode import SimulateSchema
from ..testmode import simulate
from .auth import caller_brand
from .paging import single
from .resource import resource_blueprint

URL = "test/payments"
# Never replayed from an Idempotency-Key: the claim and the simulated SMS commit apart, as a
# customer's and a phone's would; a repeat finds the payment moved on (409).
blp = resource_blueprint(
    "test-payments",
    "Test mode: simulate a test payment's outcome without a phone or money.",
    idempotent=False,
    thing="payment",
)


@blp.before_request
def require_test_key():
    """A live key is refused before anything else: live payments are paid with real money."""
    if current_livemode():
        raise ApiError(
            403,
            "TEST_MODE_ONLY",
            "Only a test key (gw_test_…) can simulate a payment; live payments are paid with "
            "real money.",
        )


@blp.post("/<payment_id>/simulate")
@blp.arguments(SimulateSchema())
@blp.response(200, envelope(PaymentSchema))
def simulate_payment(data, payment_id):
    """Simulate a test payment's outcome (paid, mismatch or expired) through the real SMS,
    matching and webhook path; 409 when its state does not allow it."""
    payment = payments.get_payment(caller_brand(), payment_id, livemode=False)
    return single(simulate.simulate_payment(payment, data["outcome"]))
