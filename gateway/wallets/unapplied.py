"""Money that did not apply: trips a wallet says were paid but that did not pay their payment
(another amount, another payment's answer, the payment closed first). The merchant lists them,
returns the money through the wallet or marks them handled (docs/wallet-apis.md)."""

from ..domain_errors import invalid_state, not_found
from ..extensions import db
from ..payments.models.payment import Payment
from . import WalletRefused, method_of, move_wallet_payment, provider_api
from .http import WalletTimeout
from .models import WALLET_HANDLED, WALLET_RETURNED, WALLET_UNAPPLIED, WalletPayment

RETURN_UNKNOWN = (
    "The wallet did not answer the refund in time: it may have made it. Check the payment in the "
    "wallet's merchant portal before refunding again, then mark this money handled if it was."
)


def unapplied_query(brand, livemode=True, payment=None):
    """(trip, payment) rows of the brand's unapplied money, newest first (one payment's when
    given)."""
    query = (
        db.select(WalletPayment, Payment)
        .join(Payment, Payment.id == WalletPayment.payment_id)
        .where(
            Payment.brand_id == brand.id,
            Payment.livemode == livemode,
            WalletPayment.state == WALLET_UNAPPLIED,
        )
        .order_by(WalletPayment.updated_at.desc(), WalletPayment.id.desc())
    )
    if payment is not None:
        query = query.where(WalletPayment.payment_id == payment.id)
    return query


def unapplied_trip(brand, trip_id, livemode=True):
    """(trip, payment) of one of the brand's unapplied trips; NOT_FOUND for any other id."""
    found = db.session.execute(
        unapplied_query(brand, livemode).where(WalletPayment.id == trip_id)
    ).first()
    if found is None:
        raise not_found("This money is not waiting to be returned.")
    return found


def returned_amount(trip):
    """The taka a return gives back: what the wallet took (else the trip's amount)."""
    return trip.paid_amount if trip.paid_amount is not None else trip.amount


def return_unapplied(trip, payment, reason):
    """Refund an unapplied trip's money through its wallet, then mark it returned; the wallet's
    refund id. The wallet refuses a second full refund, so a double click returns the money once;
    WalletRefused (or the wallet's unavailability) leaves the trip unapplied."""
    amount = returned_amount(trip)
    if amount is None:
        raise WalletRefused("The wallet did not say how much it took: refund it in its portal.")
    try:
        refund_id = provider_api(trip.provider).refund(
            payment, method_of(trip), amount, reason, row=trip, amount_is_taka=True
        )
    except WalletTimeout:
        raise WalletTimeout(RETURN_UNKNOWN) from None
    # Marked handled meanwhile: the money went back all the same, and the caller's audit entry
    # keeps the wallet's refund id.
    move_wallet_payment(trip, WALLET_RETURNED, from_states=(WALLET_UNAPPLIED,))
    return refund_id


def mark_handled(trip):
    """The merchant dealt with an unapplied trip's money outside the gateway."""
    if not move_wallet_payment(trip, WALLET_HANDLED, from_states=(WALLET_UNAPPLIED,)):
        raise invalid_state("This money was returned or marked handled meanwhile.")
