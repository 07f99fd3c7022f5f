"""Missed texts: a gap in a wallet's balance chain, shown in the panel and told once.

A gap opens at a broken text whose balance before no known text of its chain ends at: the phone
missed the text between the chain's last verified balance and it. A broken text continuing
another broken one (or a fork) is not a new gap. The gap closes when the missing text arrives (the
chain heals) or the merchant sets a new starting balance; it is told once, after GRACE, so a text
that merely arrived out of order never alarms anyone.
"""

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from ..accounts.models.brand import Brand
from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..extensions import db
from ..notifications.events import notify_chain_gap
from ..payments.methods import PROVIDER_NAMES
from .models.balance_chain import BalanceChain, BalanceLink

# Texts often arrive out of order by seconds or minutes (a phone flushing its queue): a gap still
# open this long after its text arrived is a missed text.
GRACE = timedelta(minutes=10)
LOOKBACK = timedelta(days=7)  # a gap is told within a week of its text, or never
BATCH = 200


@dataclass(frozen=True)
class Gap:
    """A missed text: the chain's balance before it (`start`) and the balance the next text implies
    (`end`)."""

    chain: BalanceChain
    link: BalanceLink  # the first text after the gap
    previous: BalanceLink | None  # the last verified text before it; None: the starting balance
    start: Decimal
    end: Decimal

    @property
    def missing(self):
        """The net amount the missing text(s) moved: positive in, negative out."""
        return self.end - self.start

    @property
    def key(self):
        """One gap, however many texts later find it: its chain and its left edge."""
        edge = (
            self.previous.id
            if self.previous is not None
            else f"anchor{self.chain.anchor_at:%Y%m%d%H%M%S}"
        )
        return f"{self.chain.id}:{edge}"


def wallet_name(chain, device_name=None):
    """How the merchant knows a chain's wallet: provider and number, phone, or all phones."""
    provider = PROVIDER_NAMES.get(chain.provider, chain.provider.capitalize())
    if chain.receiving_number:
        return f"{provider} {chain.receiving_number}"
    if chain.device_id is not None:
        return f"{provider} on {device_name or 'a phone'}"
    return f"{provider} (all phones)"


def grouped(amount):
    """An amount as a merchant reads it: 1,500.00."""
    return f"{amount:,.2f}"


def gap_sentence(gap):
    """'balance jumped from 1,500.00 to 1,700.00: a text of 200.00 (money in) may be missing'."""
    start, end, amount = grouped(gap.start), grouped(gap.end), grouped(abs(gap.missing))
    if gap.missing > 0:
        return f"balance jumped from {start} to {end}: a text of {amount} (money in) may be missing"
    return f"balance fell from {start} to {end}: a text of {amount} (money out) may be missing"


def earlier_than(other, link):
    """SQL: `other` is a link of `link`'s chain with a balance, printed before it (ties: linked
    before)."""
    return db.and_(
        other.chain_id == link.chain_id,
        other.id != link.id,
        other.after.is_not(None),
        db.or_(
            other.printed_at < link.printed_at,
            db.and_(other.printed_at == link.printed_at, other.id < link.id),
        ),
    )


def gap_before(chain, link):
    """The Gap an opening link leaves before it, or None when nothing verified precedes it."""
    query = db.select(BalanceLink).where(
        earlier_than(BalanceLink, link), BalanceLink.status.in_(("start", "verified", "healed"))
    )
    if chain.anchor_at is not None:
        query = query.where(BalanceLink.printed_at >= chain.anchor_at)
    previous = db.session.execute(
        query.order_by(BalanceLink.printed_at.desc(), BalanceLink.id.desc()).limit(1)
    ).scalar_one_or_none()
    if previous is not None:
        return Gap(chain, link, previous, previous.after, link.before)
    if chain.anchor_balance is not None and chain.anchor_balance != link.before:
        # (Equal: a second text continuing the starting balance, a fork, not a missed text.)
        return Gap(chain, link, None, chain.anchor_balance, link.before)
    return None


def gap_at(link):
    """The open gap right before this text (its page), or None."""
    if link is None or link.status != "broken" or link.before is None:
        return None
    chain = link.chain
    other = db.aliased(BalanceLink)
    query = db.select(other.id).where(earlier_than(other, link), other.after == link.before)
    if chain.anchor_at is not None:
        if link.printed_at < chain.anchor_at:
            return None
        query = query.where(other.printed_at >= chain.anchor_at)
    if db.session.execute(query.limit(1)).first() is not None:
        return None
    return gap_before(chain, link)


def open_gaps(brand_id=None, arrived_before=None, since=None, limit=BATCH):
    """The gaps open now, oldest text first: of one brand (the panel) or all (the watch).

    Only a broken link that no earlier text's balance leads into opens one: one after a broken
    text is the same gap, and a fork is no missed text.
    """
    other = db.aliased(BalanceLink)
    led_into = db.exists().where(
        earlier_than(other, BalanceLink),
        other.after == BalanceLink.before,
        db.or_(BalanceChain.anchor_at.is_(None), other.printed_at >= BalanceChain.anchor_at),
    )
    query = (
        db.select(BalanceLink, BalanceChain)
        .join(BalanceChain, BalanceChain.id == BalanceLink.chain_id)
        .where(
            BalanceLink.status == "broken",
            BalanceLink.before.is_not(None),
            db.or_(
                BalanceChain.anchor_at.is_(None), BalanceLink.printed_at >= BalanceChain.anchor_at
            ),
            ~led_into,
        )
    )
    if brand_id is not None:
        query = query.where(BalanceChain.brand_id == brand_id)
    if arrived_before is not None:
        query = query.where(BalanceLink.created_at <= arrived_before)
    if since is not None:
        query = query.where(BalanceLink.created_at > since)
    rows = db.session.execute(
        query.order_by(BalanceLink.printed_at, BalanceLink.id).limit(limit)
    ).all()
    gaps, seen = [], set()
    for link, chain in rows:
        gap = gap_before(chain, link)
        if gap is not None and gap.key not in seen:
            seen.add(gap.key)
            gaps.append(gap)
    return gaps


def tell_chain_gaps(now=None):
    """The periodic job: tell each brand of each gap open past GRACE, once; how many were raised."""
    now = now or utcnow()
    raised = 0
    with unit_of_work():
        for gap in open_gaps(arrived_before=now - GRACE, since=now - LOOKBACK):
            device = gap.chain.device
            raised += (
                notify_chain_gap(
                    gap.chain.brand_id,
                    gap.key,
                    wallet_name(gap.chain, device.name if device is not None else None),
                    gap_sentence(gap),
                    gap.previous.printed_at if gap.previous is not None else gap.chain.anchor_at,
                    gap.link.printed_at,
                    gap.link.sms.public_id,
                    strict=db.session.get(Brand, gap.chain.brand_id).sms_chain_mode == "strict",
                )
                is not None
            )
    return raised
