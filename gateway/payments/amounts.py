"""What a payment asks the customer to send, in taka: its amount at the rate fixed at creation,
plus the fee of the method the customer chose. The one place these sums are made.
"""

from decimal import ROUND_CEILING, Decimal

from ..money import CENT

BDT = "BDT"


def in_taka(amount, rate):
    """`amount` of another currency in taka at `rate` (taka per unit), rounded up to the paisa."""
    return (Decimal(amount) * Decimal(rate)).quantize(CENT, rounding=ROUND_CEILING)


def fix_amounts(payment, rate=None):
    """At creation: the taka amount (the amount itself in BDT, else at `rate`; None without a
    rate) and no fee yet."""
    if payment.currency == BDT:
        payment.amount_bdt, payment.exchange_rate = payment.amount, None
    elif rate is not None:
        payment.amount_bdt, payment.exchange_rate = in_taka(payment.amount, rate), Decimal(rate)
    else:
        payment.amount_bdt, payment.exchange_rate = None, None
    charge_fee(payment, Decimal("0.00"))


def charge_fee(payment, fee):
    """Record the chosen method's fee (taka) and the total the customer sends: amount_bdt + fee."""
    for name, value in fee_charged(payment, fee).items():
        setattr(payment, name, value)


def fee_charged(payment, fee):
    """The columns charge_fee sets, {fee, amount_paid}, for a guarded UPDATE to write with the
    claim (sms/matching.py submit_claim) and for the checkout to show per method."""
    return {
        "fee": fee,
        "amount_paid": None if payment.amount_bdt is None else payment.amount_bdt + fee,
    }


def fee_received(payment, received):
    """The {fee, amount_paid} to complete with when `received` taka (an SMS's amount) fell short of
    the total the claim asked for: the fee is only what came beyond the amount, never more than the
    claim's, so a refund with the fee (refunds.py refundable) returns no taka that never came. None
    when the whole total came, or it cannot be told (no amount, no rate).
    """
    due, amount = payment.amount_paid, payment.amount_bdt
    if None in (received, due, amount) or received >= due:
        return None
    arrived = max(received - amount, Decimal("0.00"))
    return fee_charged(payment, min(payment.fee or Decimal("0.00"), arrived))
