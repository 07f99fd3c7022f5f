"""The balance chain of one wallet: its last known balance and each text's link in it."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db

# `no_balance`: a credit that printed no balance; it sits outside the chain (never a predecessor,
# never healed) and is held for review in strict mode, flagged in lenient mode.
LINK_STATUSES = ("start", "verified", "healed", "broken", "no_balance")
CHAIN_MODES = ("strict", "lenient")


class BalanceChain(db.Model):
    """Per brand, provider and wallet: the balance the next text must follow, and the merchant's
    anchor.

    `wallet` says which wallet (docs/sms-trust.md, "Several phones"): `number:<digits>` when the
    phone names the number a text arrived on, whatever phone carried it; else `phone:<device id>`
    (each phone its own wallets) or `shared` (the brand's phones carry the same wallets).
    """

    __tablename__ = "sms_balance_chains"
    __table_args__ = (
        db.UniqueConstraint("brand_id", "provider", "wallet", name="uq_sms_balance_chains_wallet"),
        db.Index("ix_sms_balance_chains_brand", "brand_id"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    provider = db.Column(db.String(20), nullable=False)
    wallet = db.Column(db.String(40), nullable=False)
    # The phone of a `phone:` chain; None for a chain of a number or of the brand's shared wallets.
    device_id = db.Column(db.Integer, db.ForeignKey("devices.id", ondelete="CASCADE"))
    # The wallet number of a `number:` chain (a JSON payload's `receiver`); else ''.
    receiving_number = db.Column(db.String(20), nullable=False, default="")
    # The balance the next text must follow (balance_chain.chain_balance): verified links only.
    balance = db.Column(Money)
    # Printed times are local wall-clock times as the provider printed them: stored naive.
    balance_printed_at = db.Column(db.DateTime)
    # The merchant's starting point: texts printed before anchor_at are outside the chain; the first
    # one after it must start from anchor_balance (or, without one, starts the chain itself).
    anchor_at = db.Column(db.DateTime)
    anchor_balance = db.Column(Money)
    anchor_followed = db.Column(db.Boolean, nullable=False, default=False)
    anchor_set_at = db.Column(UTCDateTime)
    # Bumped by every writer first: the row lock that keeps two texts of one chain in order.
    version = db.Column(db.Integer, nullable=False, default=0)
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    device = db.relationship("Device")


class BalanceLink(db.Model):
    """One text's place in its chain: the balance before and after it, and whether it follows."""

    __tablename__ = "sms_balance_links"
    __table_args__ = (
        db.Index("ix_sms_balance_links_chain_before", "chain_id", "before"),
        db.Index("ix_sms_balance_links_chain_after", "chain_id", "after"),
        # The gap watch (sms/chain_gaps.py) and the panel look for broken links every sweep.
        db.Index("ix_sms_balance_links_status_created", "status", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    chain_id = db.Column(
        db.Integer, db.ForeignKey("sms_balance_chains.id", ondelete="CASCADE"), nullable=False
    )
    sms_id = db.Column(
        db.Integer, db.ForeignKey("inbound_sms.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    printed_at = db.Column(db.DateTime, nullable=False)
    # None only for a `no_balance` link: the text printed no balance.
    before = db.Column(Money)
    after = db.Column(Money)
    status = db.Column(db.String(12), nullable=False)
    # For a broken link: the balance the chain expected before it (None when none could be
    # expected).
    expected = db.Column(Money)
    note = db.Column(db.String(255))
    # Another link (or the chain's anchor) continues from this one's balance: it cannot be followed
    # twice.
    followed = db.Column(db.Boolean, nullable=False, default=False)
    # The credit was held for review because it did not follow; healing releases it.
    held = db.Column(db.Boolean, nullable=False, default=False)
    created_at = db.Column(UTCDateTime, nullable=False, default=utcnow)

    chain = db.relationship("BalanceChain")
    sms = db.relationship("InboundSms")
