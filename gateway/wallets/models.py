"""The wallets' tables: an API method's sealed credentials and each payment's round trip."""

from ..clock import utcnow
from ..db_types import Money, UTCDateTime
from ..extensions import db

# A wallet payment's own states (the payment's are states.py's): started at the wallet, then
# settled (our payment completed), failed or cancelled; or `unapplied`: paid at the wallet but not
# our payment (another amount, another payment's answer, our payment closed first), money at the
# merchant's wallet account until the merchant refunds it through the wallet (`returned`) or marks
# it `handled` (docs/wallet-apis.md, "Money that did not apply").
WALLET_STARTED, WALLET_SETTLED, WALLET_FAILED, WALLET_CANCELLED = (
    "started",
    "settled",
    "failed",
    "cancelled",
)
WALLET_UNAPPLIED, WALLET_RETURNED, WALLET_HANDLED = "unapplied", "returned", "handled"
WALLET_STATES = (
    WALLET_STARTED,
    WALLET_SETTLED,
    WALLET_FAILED,
    WALLET_CANCELLED,
    WALLET_UNAPPLIED,
    WALLET_RETURNED,
    WALLET_HANDLED,
)


class WalletCredential(db.Model):
    """An API method's base URL and its provider's secrets, sealed (sealing.py) bound to the
    method id."""

    __tablename__ = "wallet_credentials"

    id = db.Column(db.Integer, primary_key=True)
    method_id = db.Column(
        db.Integer,
        db.ForeignKey("payment_methods.id", ondelete="CASCADE"),
        nullable=False,
        unique=True,
    )
    base_url = db.Column(db.String(500), nullable=False)
    sealed = db.Column(db.Text, nullable=False)  # sealed JSON of the provider's secrets
    # The provider's access token, sealed, when no Redis holds it (tokens.py).
    token_sealed = db.Column(db.Text)
    token_expires_at = db.Column(UTCDateTime)
    # Until when one process holds the right to renew the token (no Redis: tokens.py).
    token_lock_until = db.Column(UTCDateTime)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)


class WalletPayment(db.Model):
    """One trip of a payment to a wallet's page: the wallet's id for it and how it ended."""

    __tablename__ = "wallet_payments"
    __table_args__ = (
        db.UniqueConstraint(
            "provider", "provider_payment_id", name="uq_wallet_payments_provider_id"
        ),
        db.Index("ix_wallet_payments_state_updated", "state", "updated_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    payment_id = db.Column(
        db.Integer, db.ForeignKey("payments.id", ondelete="CASCADE"), nullable=False, index=True
    )
    method_id = db.Column(
        db.Integer, db.ForeignKey("payment_methods.id", ondelete="CASCADE"), nullable=False
    )
    provider = db.Column(db.String(20), nullable=False)
    provider_payment_id = db.Column(db.String(255), nullable=False)
    state = db.Column(db.String(20), nullable=False, default=WALLET_STARTED)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    last_error = db.Column(db.String(255))
    # What this trip asked the customer for (the method's fee and amount_bdt + fee), fixed when it
    # started: the wallet's "paid" is checked against it, and it is what the payment records when
    # this trip pays it. Null only in a database older than 0025 with no payment amount to copy.
    amount = db.Column(Money)
    fee = db.Column(Money)
    # What the wallet says it took and its transaction id, once it said "paid" (settled or
    # unapplied): what a refund through the wallet returns.
    paid_amount = db.Column(Money)
    provider_trx_id = db.Column(db.String(100))


# A refund the wallet did not answer in time: pending until the wallet (or the merchant, by hand)
# says it was made (then recorded as a refund, once) or not made.
REFUND_PENDING, REFUND_MADE, REFUND_NOT_MADE = "pending", "made", "not_made"


class WalletRefund(db.Model):
    """A refund sent to a wallet whose answer never came: the money of the payment is untouched
    until it is settled (docs/wallet-apis.md, refund failures)."""

    __tablename__ = "wallet_refunds"
    __table_args__ = (db.Index("ix_wallet_refunds_state_updated", "state", "updated_at"),)

    id = db.Column(db.Integer, primary_key=True)
    payment_id = db.Column(
        db.Integer, db.ForeignKey("payments.id", ondelete="CASCADE"), nullable=False, index=True
    )
    wallet_payment_id = db.Column(
        db.Integer, db.ForeignKey("wallet_payments.id", ondelete="CASCADE"), nullable=False
    )
    amount = db.Column(Money, nullable=False)
    reason = db.Column(db.String(500))
    # Who asked (a panel user; None: the API), kept for the refund recorded later.
    refunded_by_id = db.Column(db.Integer, db.ForeignKey("users.id", ondelete="SET NULL"))
    state = db.Column(db.String(20), nullable=False, default=REFUND_PENDING)
    provider_refund_id = db.Column(db.String(100))
    # The refund recorded once the wallet confirmed it.
    refund_id = db.Column(db.Integer, db.ForeignKey("refunds.id", ondelete="SET NULL"))
    last_error = db.Column(db.String(255))
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
