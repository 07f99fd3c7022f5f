"""A brand's way to be paid: a provider, the receiving number and how the customer sends to it."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db

PROVIDERS = ("bkash", "nagad", "rocket", "upay")
METHOD_KINDS = ("personal", "agent", "merchant")
# Methods that are not a wallet number (docs/methods.md): a manual method (the merchant
# checks the reference and proof) and a bank account (a listed bank's credit alert pays it).
MANUAL, BANK = "manual", "bank"
ACCOUNT_KINDS = (MANUAL, BANK)
# Their provider is their kind: "bank" is also the provider the bank alert parser gives its texts.
ACCOUNT_PROVIDERS = ACCOUNT_KINDS
# A wallet's own merchant API (gateway/wallets/, docs/wallet-apis.md): the customer pays on the
# wallet's page and comes back; the credentials are sealed in wallet_credentials, the number is a
# hidden key like an account method's.
API = "api"
API_PROVIDERS = ("bkash", "nagad")
PROOF_OFF, PROOF_OPTIONAL, PROOF_REQUIRED = "off", "optional", "required"
PROOF_CHOICES = (PROOF_OFF, PROOF_OPTIONAL, PROOF_REQUIRED)


class PaymentMethod(db.Model):
    __tablename__ = "payment_methods"
    __table_args__ = (
        db.UniqueConstraint(
            "brand_id", "provider", "number", name="uq_payment_methods_brand_provider_number"
        ),
        db.Index("ix_payment_methods_brand_position", "brand_id", "position"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    provider = db.Column(db.String(20), nullable=False)
    # A wallet's receiving number; for a manual or bank method, a key made at creation that keeps
    # the unique (brand, provider, number) constraint and is never shown (account_number is).
    number = db.Column(db.String(11), nullable=False)
    kind = db.Column(db.String(20), nullable=False, default="personal")
    instructions = db.Column(db.Text)
    ask_sender_number = db.Column(db.Boolean, nullable=False, default=False)
    enabled = db.Column(db.Boolean, nullable=False, default=True)
    position = db.Column(db.Integer, nullable=False, default=0)
    # A number no merchant owns (bootstrap's `make run` sample): every page that shows it says so.
    is_demo = db.Column(db.Boolean, nullable=False, default=False, server_default=db.false())
    # The fee passed to the customer (gateway/payments/fees.py fee_for): fixed taka plus a percent
    # of the taka amount, within the optional minimum and maximum.
    fee_fixed = db.Column(Money, nullable=False, default=0, server_default=db.text("0"))
    fee_percent = db.Column(
        db.Numeric(6, 3), nullable=False, default=0, server_default=db.text("0")
    )
    fee_min = db.Column(Money)
    fee_max = db.Column(Money)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)
    # Manual and bank methods only (`instructions` is the English text, instructions_bn the Bangla).
    display_name = db.Column(db.String(80))
    instructions_bn = db.Column(db.Text)
    account_name = db.Column(db.String(120))
    account_number = db.Column(db.String(64))
    bank_name = db.Column(db.String(80))
    bank_branch = db.Column(db.String(120))
    proof = db.Column(db.String(10))  # PROOF_CHOICES, manual methods only

    brand = db.relationship("Brand")

    @property
    def is_account(self):
        """Whether this is a manual or bank method, not a wallet number."""
        return self.kind in ACCOUNT_KINDS

    @property
    def is_wallet_api(self):
        """Whether the customer pays on the wallet's own page (a bKash or Nagad merchant API)."""
        return self.kind == API

    @property
    def has_number(self):
        """Whether the customer sends to a number shown at checkout and types a TrxID."""
        return not (self.is_account or self.is_wallet_api)
