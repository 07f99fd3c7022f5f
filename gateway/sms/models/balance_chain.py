"""The balance chain of one wallet on one phone: its last known balance and each text's link in
it."""

from ...clock import utcnow
from ...db_types import Money, UTCDateTime
from ...extensions import db

LINK_STATUSES = ("start", "verified", "healed", "broken")
CHAIN_MODES = ("strict", "lenient")


class BalanceChain(db.Model):
    """Per device, provider and receiving number: the last balance a text printed, and the
    merchant's anchor.
    """

    __tablename__ = "sms_balance_chains"
    __table_args__ = (
        db.UniqueConstraint(
            "device_id", "provider", "receiving_number", name="uq_sms_balance_chains_key"
        ),
        db.Index("ix_sms_balance_chains_brand", "brand_id"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    device_id = db.Column(
        db.Integer, db.ForeignKey("devices.id", ondelete="CASCADE"), nullable=False
    )
    provider = db.Column(db.String(20), nullable=False)
    # The wallet number the texts arrive on, when the phone says (a JSON payload's `receiver`); else
    # ''.
    receiving_number = db.Column(db.String(20), nullable=False, default="")
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
    )

    id = db.Column(db.Integer, primary_key=True)
    chain_id = db.Column(
        db.Integer, db.ForeignKey("sms_balance_chains.id", ondelete="CASCADE"), nullable=False
    )
    sms_id = db.Column(
        db.Integer, db.ForeignKey("inbound_sms.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    printed_at = db.Column(db.DateTime, nullable=False)
    before = db.Column(Money, nullable=False)
    after = db.Column(Money, nullable=False)
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
