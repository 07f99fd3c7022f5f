"""The balance chain: a wallet text's printed balance must continue the previous text's
(docs/sms-trust.md).

Every text from an official sender that moves money prints the balance after it. For a credit the
balance before is `balance − amount`; for money out (send money, cash out, payments) it is
`balance + amount + fee`. A text *follows* when its balance before equals the balance after of a
verified text printed no later than it, that no other text follows yet (or the merchant's starting
balance). Texts are ordered by their printed time, not by arrival, so a late text that fills a gap
heals the texts after it. A credit that does not follow, or prints no balance, is held for review
(strict, the default) or completes flagged (lenient). A chain is one wallet's: a number the phone
names, whatever phone carried the text, else the phone's own or the brand's shared wallets.
"""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy.exc import IntegrityError

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..domain_errors import field_error
from ..extensions import commit_without_expiring, db
from ..money import format_amount
from ..states import SMS_REVIEW
from .held_credits import hold_unverified_credit, release_verified_credit
from .models.balance_chain import CHAIN_MODES, BalanceChain, BalanceLink
from .models.inbound_sms import InboundSms
from .printed_time import local_now, printed_datetime
from .senders import is_official

# Kinds that put money into the wallet, payable or not (a cashback still moves the balance).
CREDIT_KINDS = frozenset(
    {
        "receive",
        "payment_received",
        "deposit_received",
        "remittance_received",
        "cash_out_received",
        "cash_in_received",
        "b2b_received",
        "bank_credit",
        "template",
        "cashback",
        "reward",
        "loan",
        "interest",
        "refund",
        "add_money",
    }
)
# Kinds that take money out: the balance before is the balance after plus the amount and the fee.
DEBIT_KINDS = frozenset(
    {
        "send",
        "cash_out",
        "cash_in_sent",
        "payment",
        "bill_payment",
        "recharge",
        "b2b_sent",
        "bank_debit",
    }
)
# Why a credit that printed no balance cannot pay by itself in strict mode (docs/sms-trust.md).
NO_BALANCE = "no balance printed"


@dataclass(frozen=True)
class Movement:
    """What one text says about its wallet: the balance before and after, and when it was
    printed; before and after are None for a credit that printed no balance."""

    before: Decimal | None
    after: Decimal | None
    printed_at: datetime
    credit: bool

    @property
    def unprinted(self):
        """Whether the text printed no balance (a credit that cannot be checked against the
        chain)."""
        return self.after is None


def movement(parsed, sms, brand_timezone):
    """The Movement of a parsed text, or None when it moves no money we can chain.

    A credit that can pay (`incoming`) but printed no balance is a Movement without balances: it
    cannot be chained, so it is held or flagged instead of paying unchecked.
    """
    if parsed.amount is None:
        return None
    when = printed_datetime(parsed.printed_time, sms.received_at or sms.created_at, brand_timezone)
    if parsed.balance is None:
        return Movement(None, None, when, True) if parsed.incoming else None
    if parsed.kind in CREDIT_KINDS or parsed.incoming:
        before, credit = parsed.balance - parsed.amount, True
    elif parsed.kind in DEBIT_KINDS:
        before, credit = parsed.balance + parsed.amount + (parsed.fee or Decimal("0")), False
    else:
        return None
    return Movement(before, parsed.balance, when, credit)


def wallet_key(brand, device_id, receiving_number=""):
    """Which wallet a text is of: (wallet, the phone of a `phone:` chain, the number of a
    `number:` chain).

    A number the phone names is the wallet, whatever phone carried the text: a spare phone's copy
    of a text continues the same chain. Without one, the wallet is the phone's own, unless the
    brand says its phones carry the same wallets (one chain per provider across its phones).
    """
    if receiving_number:
        return f"number:{receiving_number}", None, receiving_number
    if brand.sms_shared_wallets:
        return "shared", None, ""
    return f"phone:{device_id}", device_id, ""


def chain_key(brand, device_id, provider, receiving_number=""):
    """(brand id, provider, wallet, phone, number): a chain's identity and what creates it."""
    wallet, device, number = wallet_key(brand, device_id, receiving_number)
    return brand.id, provider, wallet, device, number


def lock_chains(keys):
    """Lock the chains of chain_key() keys, in the order given; {key: chain}. One commit first,
    then one guarded bump per chain (creating the missing ones).

    That commit keeps the caller's rows loaded (a batch's texts just stored): whatever changes them
    meanwhile, every write to them is a guarded UPDATE that looks at the row itself.
    """
    commit_without_expiring()
    for _ in range(3):
        chains, missing = {}, []
        for key in keys:
            chain = bump_chain(*key[:3])
            if chain is None:
                missing.append(key)
            chains[key] = chain
        if not missing:
            return chains
        db.session.rollback()  # create the missing rows apart, then lock every chain again in order
        for key in missing:
            create_chain(*key)
    raise RuntimeError("the balance chain rows could not be locked")


def bump_chain(brand_id, provider, wallet):
    """Bump a chain's version (its row lock until commit) and load it; None when it does not
    exist."""
    key = (
        BalanceChain.brand_id == brand_id,
        BalanceChain.provider == provider,
        BalanceChain.wallet == wallet,
    )
    bumped = db.session.execute(
        db.update(BalanceChain)
        .where(*key)
        .values(version=BalanceChain.version + 1)
        .execution_options(synchronize_session=False)
    ).rowcount
    if not bumped:
        return None
    return db.session.execute(
        db.select(BalanceChain).where(*key).execution_options(populate_existing=True)
    ).scalar_one()


def create_chain(brand_id, provider, wallet, device_id, receiving_number):
    """Insert a chain row and commit it; another text creating it first is fine."""
    try:
        db.session.add(
            BalanceChain(
                brand_id=brand_id,
                provider=provider,
                wallet=wallet,
                device_id=device_id,
                receiving_number=receiving_number,
                version=0,
                anchor_followed=False,
            )
        )
        db.session.commit()
    except IntegrityError:
        db.session.rollback()


def lock_chain(brand, device_id, provider, receiving_number=""):
    """The chain row, locked for this transaction by bumping its version (created on first use).

    The UPDATE is the transaction's first statement: PostgreSQL holds the row lock and SQLite the
    write lock until commit, so two texts of one chain are linked one after the other.
    """
    key = chain_key(brand, device_id, provider, receiving_number)
    return lock_chains([key])[key]


def linked(chain, *where):
    """SQL for the chain's verified links (start, verified, healed) inside the anchor's window."""
    query = db.select(BalanceLink).where(
        BalanceLink.chain_id == chain.id,
        BalanceLink.status.in_(("start", "verified", "healed")),
        *where,
    )
    if chain.anchor_at is not None:
        query = query.where(BalanceLink.printed_at >= chain.anchor_at)
    return query


def first_linked(chain):
    """The earliest verified link of the chain (its start), or None for a chain not started."""
    return db.session.execute(
        linked(chain).order_by(BalanceLink.printed_at, BalanceLink.id).limit(1)
    ).scalar_one_or_none()


def verified_head(chain, printed_at=None):
    """The chain's last verified link printed no later than `printed_at` (None: of all), or None."""
    query = linked(chain)
    if printed_at is not None:
        query = query.where(BalanceLink.printed_at <= printed_at)
    return db.session.execute(
        query.order_by(BalanceLink.printed_at.desc(), BalanceLink.id.desc()).limit(1)
    ).scalar_one_or_none()


def chain_balance(chain, printed_at=None):
    """The balance a text printed at `printed_at` (None: the next text) must follow: the last
    verified text's balance after, else the starting balance; None when nothing can be expected.

    The one source of the chain's stored balance and of a broken text's `expected` and reason: a
    broken text's own balance is never it.
    """
    if printed_at is not None and chain.anchor_at is not None and printed_at < chain.anchor_at:
        return None
    head = verified_head(chain, printed_at)
    return head.after if head is not None else chain.anchor_balance


def store_chain_balance(chain):
    """Store on the chain row the balance the next text must follow (chain_balance) and when it
    was printed."""
    db.session.flush()
    head = verified_head(chain)
    chain.balance = chain_balance(chain)
    chain.balance_printed_at = head.printed_at if head is not None else chain.anchor_at


def break_reason(chain, move, expected):
    """Why a movement does not follow, with the balance expected (chain_balance) and the one the
    text implies."""
    got = format_amount(move.before)
    if chain.anchor_at is not None and move.printed_at < chain.anchor_at:
        return f"balance cannot be checked: the text is older than the starting balance set ({got})"
    if expected is None:
        return f"balance cannot be checked: the text is older than the chain's first text ({got})"
    forked = db.session.execute(
        linked(
            chain, BalanceLink.after == move.before, BalanceLink.printed_at <= move.printed_at
        ).limit(1)
    ).scalar_one_or_none()
    if forked is not None or expected == move.before:
        return (
            f"balance {got} is already continued by another text (a fork): "
            f"expected {format_amount(expected)}"
        )
    return (
        f"balance does not follow the previous text: expected {format_amount(expected)}, got {got}"
    )


def link_text(sms, parsed, brand, receiving_number=""):
    """Place one stored text in its chain (see link_texts); its link, or None for a text not
    chained.
    """
    return link_texts([(sms, parsed, receiving_number)], brand)[0]


def link_texts(texts, brand):
    """Place stored texts, in the order given, in their chains: one transaction for them all.

    `texts` holds (sms, parsed, receiving number) in printed order. Each chain the texts touch is
    locked once (in one order for every batch), then each text is linked as if alone; the
    commit is the one commit, and only then are healed credits released. Returns each text's
    link (the existing one when a resend chained it meanwhile), or None for a text not chained.
    A credit that does not follow is held for review in the same commit when the brand is strict.
    """
    # Each text's (id, chain key, movement), read before locking: creating a missing chain rolls
    # back, which would expire the texts.
    places = []
    for sms, parsed, receiver in texts:
        move = chain_movement(sms, parsed, brand)
        key = chain_key(brand, sms.device_id, parsed.provider, receiver)
        places.append(None if move is None else (sms.id, key, move))
    keys = sorted({place[1] for place in places if place is not None})
    if not keys:
        return [None] * len(texts)
    chains = lock_chains(keys)
    already = dict(
        db.session.execute(
            db.select(BalanceLink.sms_id, BalanceLink).where(
                BalanceLink.sms_id.in_([place[0] for place in places if place is not None])
            )
        )
        .tuples()
        .all()
    )
    pools = {
        key: ChainPool.load(chain, [p[2] for p in places if p is not None and p[1] == key])
        for key, chain in chains.items()
    }
    links, released = [], []
    for (sms, _, _), place in zip(texts, places):
        if place is None:
            links.append(None)
        elif place[0] in already:
            # Chained meanwhile by a resend of it (the chain's lock orders the two).
            links.append(already[place[0]])
        else:
            sms_id, key, move = place
            link = link_move(pools[key], sms_id, move, brand, sms)
            released += pools[key].heal(link)
            links.append(link)
    for chain in chains.values():
        store_chain_balance(chain)  # after the batch's links and heals: one query per chain
    db.session.commit()
    settle_released(released)
    return links


def chain_movement(sms, parsed, brand):
    """The Movement of a stored text that enters a chain (an official sender's, from a phone), or
    None.
    """
    if not is_official(sms.sender, parsed.provider) or sms.device_id is None:
        return None
    return movement(parsed, sms, brand.timezone)


def link_move(pool, sms_id, move, brand, sms):
    """Link one text into its locked chain (uncommitted): verified, start, broken or no_balance."""
    chain = pool.chain
    link = BalanceLink(
        chain_id=chain.id,
        sms_id=sms_id,
        printed_at=move.printed_at,
        before=move.before,
        after=move.after,
        followed=False,
        held=False,
    )
    if move.unprinted:
        return link_unprinted(link, brand, sms)
    predecessor = pool.predecessor(move)
    if predecessor == "anchor":
        chain.anchor_followed = True
        link.status = "verified"
    elif predecessor is not None:
        predecessor.followed = True
        link.status = "verified"
    elif starts_chain(chain, move, link):
        link.status = "start"
    else:
        link.expected = chain_balance(chain, move.printed_at)
        link.status, link.note = "broken", break_reason(chain, move, link.expected)[:255]
    db.session.add(link)
    pool.added(link)
    chain.updated_at = utcnow()
    if link.status == "broken" and move.credit and brand.sms_chain_mode == "strict":
        link.held = hold_unverified_credit(sms, link.note)
    return link


def link_unprinted(link, brand, sms):
    """A credit that printed no balance: outside the chain, held for review when the brand is
    strict (as a credit that does not follow is), flagged when lenient."""
    link.status, link.note = "no_balance", NO_BALANCE
    db.session.add(link)
    if brand.sms_chain_mode == "strict":
        link.held = hold_unverified_credit(sms, NO_BALANCE)
    return link


class ChainPool:
    """A locked chain's links a batch's texts can meet, loaded once: the links whose balance after
    is some text's balance before (its possible predecessors), and the balances before of broken
    links (what a new link may heal). Answers "which verified link, not yet followed, printed no
    later, ends at this balance?" without a query per text; the chain's lock keeps every other
    writer out, so the pool stays what the table holds."""

    def __init__(self, chain, candidates, broken_befores):
        self.chain = chain
        self.candidates = list(candidates)
        self.broken_befores = set(broken_befores)

    @classmethod
    def load(cls, chain, moves):
        befores = sorted({m.before for m in moves if not m.unprinted})
        afters = sorted({m.after for m in moves if not m.unprinted})
        candidates = db.session.execute(
            db.select(BalanceLink).where(
                BalanceLink.chain_id == chain.id, BalanceLink.after.in_(befores)
            )
        ).scalars()
        broken = db.session.execute(
            db.select(BalanceLink.before).where(
                BalanceLink.chain_id == chain.id,
                BalanceLink.status == "broken",
                BalanceLink.before.in_(afters),
            )
        ).scalars()
        return cls(chain, candidates, broken)

    def predecessor(self, move):
        """'anchor', the link this movement continues (the latest printed, then the latest linked),
        or None."""
        chain = self.chain
        if (
            chain.anchor_balance is not None
            and not chain.anchor_followed
            and chain.anchor_balance == move.before
            and move.printed_at >= chain.anchor_at
        ):
            return "anchor"
        found = [
            (link.printed_at, link.id is None, link.id or 0, index)
            for index, link in enumerate(self.candidates)
            if link.after == move.before
            and link.status in VERIFIED
            and not link.followed
            and link.printed_at <= move.printed_at
            and (chain.anchor_at is None or link.printed_at >= chain.anchor_at)
        ]
        return self.candidates[max(found)[-1]] if found else None

    def added(self, link):
        """A new link of this batch: a possible predecessor of the next texts, or a broken one to
        heal.
        """
        self.candidates.append(link)
        if link.status == "broken":
            self.broken_befores.add(link.before)

    def heal(self, link):
        """heal(), run only when some broken link starts from this link's balance."""
        if link.status in ("broken", "no_balance") or link.after not in self.broken_befores:
            return []
        return heal(self.chain, link)


VERIFIED = ("start", "verified", "healed")


def starts_chain(chain, move, link):
    """Whether this text starts the chain: the first one, or one printed just before the first.

    A chain with no verified text (after a correction without a balance, or a new phone) starts
    at its first text. A late text printed before the start whose balance leads into it becomes
    the new start, and the old start now follows it.
    """
    if chain.anchor_balance is not None:
        return False
    if chain.anchor_at is not None and move.printed_at < chain.anchor_at:
        return False
    first = first_linked(chain)
    if first is None:
        return True
    if (
        move.printed_at <= first.printed_at
        and move.after == first.before
        and first.status == "start"
    ):
        first.status = "verified"
        link.followed = True
        return True
    return False


def heal(chain, link):
    """Broken links that the new verified link leads into become healed, and so on down the chain.

    Returns the held links released, for settle_released to match or approve after the commit.
    """
    released = []
    current = link
    while not current.followed:
        nxt = db.session.execute(
            db.select(BalanceLink)
            .where(
                BalanceLink.chain_id == chain.id,
                BalanceLink.status == "broken",
                BalanceLink.before == current.after,
                BalanceLink.printed_at >= current.printed_at,
                BalanceLink.id != current.id,
            )
            .order_by(BalanceLink.printed_at, BalanceLink.id)
            .limit(1)
        ).scalar_one_or_none()
        if nxt is None:
            break
        current.followed = True
        nxt.status, nxt.note, nxt.expected = "healed", None, None
        if nxt.held:
            nxt.held = False
            released.append(nxt.sms_id)
        db.session.flush()
        current = nxt
    return released


def settle_released(sms_ids):
    """Held credits whose chain healed: matched or approved as if they had followed at once."""
    for sms_id in sms_ids:
        sms = db.session.get(InboundSms, sms_id, populate_existing=True)
        if sms is not None:
            with unit_of_work():
                release_verified_credit(sms)


# Why a strict brand's credit waits when its chain step failed (gateway/sms/ingest.py).
UNCHECKED = "balance chain could not be checked (see the server log)"
CHAIN_REASONS = (UNCHECKED, "balance does not follow", "balance cannot be checked")


def settle_unsettled():
    """Credits still held for their chain although it now follows: the request that would have
    released them died after its commit. The periodic `settle-chains` job; returns how many."""
    sms_ids = (
        db.session.execute(
            db.select(InboundSms.id)
            .join(BalanceLink, BalanceLink.sms_id == InboundSms.id)
            .where(
                InboundSms.status == SMS_REVIEW,
                BalanceLink.status.in_(("start", "verified", "healed")),
                BalanceLink.held.is_(False),
                db.or_(*(InboundSms.review_reason.startswith(r) for r in CHAIN_REASONS)),
            )
            .order_by(InboundSms.id)
        )
        .scalars()
        .all()
    )
    db.session.commit()
    settle_released(sms_ids)
    return len(sms_ids)


def link_of(sms):
    """The chain link of a stored text, or None."""
    return db.session.execute(
        db.select(BalanceLink).where(BalanceLink.sms_id == sms.id)
    ).scalar_one_or_none()


def brand_chains(brand):
    """The brand's chains, by provider and wallet, for the panel."""
    return (
        db.session.execute(
            db.select(BalanceChain)
            .where(BalanceChain.brand_id == brand.id)
            .order_by(BalanceChain.provider, BalanceChain.wallet, BalanceChain.id)
        )
        .scalars()
        .all()
    )


def set_starting_balance(brand, device, provider, balance, receiving_number=""):
    """The merchant sets or corrects a chain's start: the next text must follow `balance`.

    The chain is the one a text from `device` would join (wallet_key); with a `receiving_number`,
    that number's chain, whatever the phone (`device` may then be None). `balance` None restarts
    the chain: the next text printed from now on starts it. Texts printed before now stay outside
    the new chain (held ones wait for review). Returns the chain; the caller commits (with its
    audit row).
    """
    if receiving_number and not (receiving_number.isdigit() and 6 <= len(receiving_number) <= 11):
        raise field_error("device", "Choose one of your wallet numbers.", code="invalid")
    if not receiving_number and (device is None or device.brand_id != brand.id):
        raise field_error("device", "Choose one of your phones.", code="not_found")
    if balance is not None and (not isinstance(balance, Decimal) or balance < 0):
        raise field_error("balance", "Enter the balance as a positive amount.", code="invalid")
    chain = lock_chain(brand, device.id if device else None, provider, receiving_number)
    now = utcnow()
    # Texts print minutes: one printed in the minute of the correction counts as after it.
    chain.anchor_at = local_now(now, brand.timezone).replace(second=0)
    chain.anchor_balance = balance
    chain.anchor_followed = False
    chain.anchor_set_at = now
    chain.updated_at = now
    store_chain_balance(chain)
    return chain


def wallet_numbers(brand):
    """The receiving numbers the brand's phones named, each a wallet whose start can be set."""
    return (
        db.session.execute(
            db.select(BalanceChain.receiving_number)
            .where(BalanceChain.brand_id == brand.id, BalanceChain.wallet.startswith("number:"))
            .distinct()
            .order_by(BalanceChain.receiving_number)
        )
        .scalars()
        .all()
    )


def set_chain_mode(brand, mode, shared_wallets=None):
    """Strict (credits that do not follow wait for review) or lenient (they complete, flagged);
    and, when given, whether the brand's phones carry the same wallets (see wallet_key)."""
    if mode not in CHAIN_MODES:
        raise field_error("mode", "Choose strict or lenient.", code="invalid")
    if shared_wallets is not None and not isinstance(shared_wallets, bool):
        raise field_error("wallets", "Choose whether your phones share wallets.", code="invalid")
    brand.sms_chain_mode = mode
    if shared_wallets is not None:
        brand.sms_shared_wallets = shared_wallets
    db.session.flush()
    return brand
