"""A brand: the merchant a deployment serves, with its look, currencies and webhook secret."""

import secrets

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db


def new_webhook_secret():
    """A fresh shared secret for signing webhooks."""
    return "whsec_" + secrets.token_hex(32)


class Brand(db.Model):
    __tablename__ = "brands"

    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(120), nullable=False)
    slug = db.Column(db.String(64), nullable=False, unique=True)
    logo_url = db.Column(db.String(2048))
    primary_color = db.Column(db.String(7), nullable=False, default="#0f766e")
    base_url = db.Column(db.String(2048))
    timezone = db.Column(db.String(64), nullable=False, default="Asia/Dhaka")
    currencies = db.Column(db.String(200), nullable=False, default="BDT")
    webhook_url = db.Column(db.String(2048))
    webhook_secret = db.Column(db.String(128), nullable=False, default=new_webhook_secret)
    # The secret rotated out: it signs X-Service-Signature-Previous until then, so receivers can
    # catch up.
    webhook_secret_previous = db.Column(db.String(128))
    webhook_secret_previous_until = db.Column(UTCDateTime)
    payment_ttl = db.Column(db.Integer)
    receipt_sms_enabled = db.Column(db.Boolean, nullable=False, default=False)
    # Security policy (owners only, gateway/accounts/roles.py): in production, owners and admins
    # must enrol in two-factor sign-in before using the panel; staff refund at most this much per
    # refund (NULL, the default: no limit, as before roles existed; 0: staff cannot refund).
    require_two_factor = db.Column(db.Boolean, nullable=False, default=False)
    staff_refund_limit = db.Column(Money)
    # How a credit whose balance does not follow the previous text is treated (docs/sms-trust.md).
    sms_chain_mode = db.Column(
        db.String(10), nullable=False, default="strict", server_default="strict"
    )
    # Whether the brand's phones carry the same wallets (a spare phone, two forwarding apps): texts
    # that name no receiving number then share one chain per provider (docs/sms-trust.md).
    sms_shared_wallets = db.Column(
        db.Boolean, nullable=False, default=False, server_default=db.false()
    )
    # Whether a refund may return the method's fee too (up to amount_paid) or only the amount
    # (gateway/payments/refunds.py refundable_ceiling; docs/methods.md).
    refund_fee = db.Column(db.Boolean, nullable=False, default=False, server_default=db.false())
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    @property
    def currency_list(self):
        """The ISO 4217 codes this brand accepts."""
        return [code.strip().upper() for code in self.currencies.split(",") if code.strip()]
