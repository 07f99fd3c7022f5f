"""The merchant's rate feed: a URL answering JSON, fetched periodically, that re-rates every
currency the brand accepts. A feed that fails (down, not JSON, a missing or absurd rate) keeps
the last rates and tells the merchant once per run of failures; docs/methods.md has the
shapes.
"""

import json
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from urllib.parse import urlsplit

from ..accounts.audit import record_audit
from ..accounts.brands import checked_url
from ..accounts.models.brand import Brand
from ..answer_commit import commit_work, unit_of_work
from ..clock import utcnow
from ..destinations import PRIVATE_ADDRESS, PRIVATE_NAME, UNRESOLVED, checked_host
from ..domain_errors import field_error
from ..extensions import db
from ..money import plain_decimal
from ..notifications.events import notify_rate_feed_failing
from ..webhooks.transport import get_body
from .amounts import BDT
from .currencies import MAX_RATE, MIN_RATE, RATE_PLACES, rate_row, write_rate
from .models.currency import FEED, RateFeed

FEED_BY = "rate feed"  # the audit log's Who, and updated_by, of a rate the feed set
CONNECT_TIMEOUT, TIMEOUT = 5, 10  # seconds: below the job's 30
ANSWER_LIMIT = 64 * 1024  # bytes: a feed of every currency in the world is under 10 KiB
# A feed rate more than double or less than half the rate in force is a mistake until a person
# says otherwise (a base mixed up, a decimal point lost): kept out, and the merchant told.
JUMP = Decimal(2)
REFUSALS = {
    PRIVATE_NAME: "The feed URL points to a private address.",
    PRIVATE_ADDRESS: "The feed URL resolves to a private, loopback or link-local address.",
    UNRESOLVED: "The feed URL's host does not resolve.",
}


class FeedProblem(Exception):
    """Why a feed's answer gave no rates: shown on the currencies page and sent to the merchant."""


def feed_of(brand):
    """The brand's feed settings, or None."""
    return db.session.get(RateFeed, brand.id)


def destination_refusal(url, strict):
    """Why the gateway may not fetch `url` (destinations.py), or None; and the checked
    addresses."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return REFUSALS[UNRESOLVED], None
    refusal, addresses = checked_host(parts.hostname or "", port, strict)
    return (REFUSALS[refusal] if refusal else None), addresses


def set_feed_url(brand, url):
    """Fetch the brand's rates from `url` from now on (blank: no feed); returns (old, new) URL."""
    url = checked_url("feed_url", url)
    feed = feed_of(brand)
    old = feed.url if feed else None
    if url is not None:
        refusal, _ = destination_refusal(url, strict=False)
        if refusal:
            raise field_error("feed_url", refusal, code="private_address")
    if url is None and feed is not None:
        db.session.delete(feed)
    elif url is not None and feed is None:
        db.session.add(RateFeed(brand_id=brand.id, url=url))
    elif url is not None and url != feed.url:
        feed.url, feed.last_error, feed.failing_since = url, None, None
    commit_work()
    return old, url


def number(value):
    """A JSON number (read as Decimal) or numeric string as a Decimal, else None."""
    if isinstance(value, bool) or not isinstance(value, (Decimal, int, str)):
        return None
    try:
        found = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return found if found.is_finite() else None


def rates_in_answer(text, codes):
    """{code: taka per unit} of `codes` from a feed's JSON, and {code: why not} for the rest.

    {"rates": {"USD": 121.5}}: taka per unit. With a base ({"base": "BDT", "rates": {"USD":
    0.0082}}, or "base_code" as some public APIs say): units of each currency per base unit, so
    taka per unit is rates[BDT] / rates[code], the base counting 1.
    """
    try:
        document = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except ValueError:
        raise FeedProblem("The feed did not answer JSON.") from None
    if not isinstance(document, dict) or not isinstance(document.get("rates"), dict):
        raise FeedProblem('The feed\'s JSON has no "rates" object.')
    quotes = {str(key).strip().upper(): value for key, value in document["rates"].items()}
    base = document.get("base", document.get("base_code"))
    if base is not None:
        base = str(base).strip().upper()
        quotes.setdefault(base, Decimal(1))
        per_base_taka = number(quotes.get(BDT))
        if per_base_taka is None or per_base_taka <= 0:
            raise FeedProblem(f"The feed's rates are per {base} but give no BDT rate.")
    found, missing = {}, {}
    for code in codes:
        quoted = number(quotes.get(code))
        if quoted is None:
            missing[code] = (
                f"{code} is not in the feed."
                if code not in quotes
                else f"The feed's {code} rate is not a number."
            )
            continue
        if base is not None:
            quoted = per_base_taka / quoted if quoted > 0 else quoted
        found[code] = quoted
    return found, missing


def fetch_answer(url):
    """The feed's answer text, or FeedProblem (refused address, no connection, not 200)."""
    refusal, addresses = destination_refusal(url, strict=True)
    if refusal:
        raise FeedProblem(refusal)
    outcome = get_body(
        url,
        {"Accept": "application/json", "User-Agent": "payment-gateway-rate-feed"},
        CONNECT_TIMEOUT,
        TIMEOUT,
        addresses,
        limit=ANSWER_LIMIT,
    )
    if outcome.error is not None:
        raise FeedProblem(f"The feed could not be read: {outcome.error}")
    if outcome.status != 200:
        raise FeedProblem(f"The feed answered HTTP {outcome.status}.")
    return outcome.body


def sane_rate(code, quoted, current):
    """The feed's rate for `code` at the column's scale, or why it is refused."""
    if not MIN_RATE <= quoted <= MAX_RATE:  # before quantizing: 1e400 would overflow it
        return None, f"The feed's {code} rate {quoted:g} is not a sane rate."
    rate = quoted.quantize(RATE_PLACES, rounding=ROUND_HALF_EVEN)
    if current is not None and not current / JUMP <= rate <= current * JUMP:
        return None, (
            f"The feed's {code} rate {plain_decimal(rate)} is too far from the current "
            f"{plain_decimal(current)}: set it by hand if it is right."
        )
    return rate, None


def apply_answer(brand, feed, answer, now):
    """Re-rate the brand's currencies from a feed answer (or the FeedProblem met fetching it);
    record the outcome on the feed, audit each change, tell the merchant of a new failure.
    Returns the problems (none: every accepted currency was rated)."""
    codes = [code for code in brand.currency_list if code != BDT]
    problems = []
    if isinstance(answer, FeedProblem):
        problems.append(str(answer))
        found = {}
    else:
        try:
            found, missing = rates_in_answer(answer, codes)
            problems.extend(missing.values())
        except FeedProblem as problem:
            problems.append(str(problem))
            found = {}
    for code, quoted in found.items():
        current = rate_row(brand, code)
        rate, refusal = sane_rate(code, quoted, current.rate if current else None)
        if refusal:
            problems.append(refusal)
            continue
        if current is not None and current.rate == rate and current.source == FEED:
            continue
        _, old = write_rate(brand, code, rate, FEED, FEED_BY)
        record_audit(
            None,
            "currency.rate",
            ("currency", code),
            {"code": code, "rate": [plain_decimal(old), plain_decimal(rate)], "source": FEED},
            brand_id=brand.id,
            who=FEED_BY,
        )
    feed.last_fetched_at = now
    if problems:
        feed.last_error = " ".join(problems)[:500]
        if feed.failing_since is None:
            feed.failing_since = now
        notify_rate_feed_failing(brand.id, feed.url, feed.last_error, feed.failing_since)
    else:
        feed.last_success_at, feed.last_error, feed.failing_since = now, None, None
    commit_work()
    return problems


def refresh_brand_rates(brand):
    """Fetch the brand's feed now and apply it (the panel's "Fetch now"); returns the problems.

    The fetch runs before the unit of work opens: no transaction waits on the feed's server.
    """
    feed = feed_of(brand)
    if feed is None:
        return ["No feed URL is set."]
    url = feed.url
    db.session.rollback()  # end the read: nothing is held while the feed answers
    answer = fetch_or_problem(url)
    with unit_of_work():
        brand, feed = db.session.get(Brand, brand.id), db.session.get(RateFeed, brand.id)
        if feed is None or feed.url != url:  # changed meanwhile: that feed's turn comes next run
            return []
        return apply_answer(brand, feed, answer, utcnow())


def fetch_or_problem(url):
    """The feed's answer, or the FeedProblem that stopped it (applied as a failure)."""
    try:
        return fetch_answer(url)
    except FeedProblem as problem:
        return problem


def refresh_rate_feeds():
    """The periodic job (`rate-feeds`, hourly): every brand's feed, each applied in a unit of its
    own. Returns how many feeds failed."""
    brand_ids = db.session.execute(db.select(RateFeed.brand_id)).scalars().all()
    db.session.rollback()
    failed = 0
    for brand_id in brand_ids:
        brand = db.session.get(Brand, brand_id)
        if brand is not None and refresh_brand_rates(brand):
            failed += 1
    return failed
