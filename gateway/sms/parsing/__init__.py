"""Parse forwarded bKash, Nagad, Rocket, Upay and bank SMS into structured, trust-checked fields."""

import logging
import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

from ..regex_engine import compile_template_regex
from ..senders import SENDER_PARSERS, official_provider, official_senders
from . import bank, bkash, nagad, rocket, upay
from .common import (
    CENT,
    ParsedSms,
    Text,
    as_text,
    ascii_digits,
    canonical_trx_id,
    clean_text,
    fold_lookalikes,
    has_money_or_trx,
    looks_like_otp,
    looks_like_promotion,
    parse_amount,
    tidy_party,
)

__all__ = [
    "ParsedSms",
    "build_sms_text",
    "canonical_trx_id",
    "parse_amount",
    "parse_sms",
    "parse_with_template",
    "sender_for",
    "sender_provider",
    "validate_template",
]

logger = logging.getLogger(__name__)

WALLETS = {module.PROVIDER: module for module in (bkash, nagad, rocket, upay)}
PARSERS = {**{name: module.parse for name, module in WALLETS.items()}, bank.PROVIDER: bank.parse}
# Loose keys of the wallets' names, only to guess which parser a forwarder's first line names: never
# trust.
HINT_KEYS = {key: module.PROVIDER for module in WALLETS.values() for key in module.NAME_KEYS}
# Upay before Rocket: Rocket's looser "Tk… received from" would also read Upay's "has been received
# from".
CONTENT_ORDER = ("bkash", "nagad", "upay", "rocket", "bank")
BRAND_MENTIONS = {
    "bkash": r"bkash",
    "nagad": r"nagad",
    "rocket": r"rocket|dbbl|dutch[\s-]*bangla",
    "upay": r"upay",
}

TEMPLATE_FIELDS = ("amount", "trx_id", "counterparty", "balance", "fee", "time")
REQUIRED_TEMPLATE_FIELDS = ("amount", "trx_id")
MAX_TEMPLATE = 2000


@dataclass(frozen=True)
class Origin:
    """Who the sender id says sent a text: a provider, a personal number, or nobody we know."""

    provider: str | None
    kind: str  # 'wallet', 'bank', 'phone', 'unknown' or 'empty'


def hint_key(sender):
    """A name reduced to guess a provider from (look-alikes folded); for parser hints, never for
    trust.
    """
    # Upper-case before folding so small Greek/Cyrillic letters meet their capital look-alikes.
    upper = ascii_digits(unicodedata.normalize("NFKC", as_text(sender))).upper()
    return re.sub(r"[^a-z0-9]", "", fold_lookalikes(upper).lower())


def classify_sender(sender):
    """The Origin of a sender id as the phone showed it; only an exact official id names a
    provider."""
    raw = as_text(sender)
    if not raw.strip():
        return Origin(None, "empty")
    provider = official_provider(raw)
    if provider:
        return Origin(provider, "bank" if provider == bank.PROVIDER else "wallet")
    digits = re.sub(r"[\s\-().+]", "", ascii_digits(raw))
    if digits.isascii() and digits.isdigit() and len(digits) >= 10:
        return Origin(None, "phone")
    return Origin(None, "unknown")


def sender_provider(sender):
    """The provider whose official sender id this is ('bkash', 'nagad', 'rocket', 'upay', 'bank'),
    else None.
    """
    return classify_sender(sender).provider


def sender_for(provider):
    """The sender id phones show for a wallet provider's texts ('bKash', 'NAGAD', '16216',
    'upay')."""
    if provider not in WALLETS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(WALLETS)}")
    return official_senders(provider)[0]


def parse_sms(sender, text):
    """Parse one forwarded SMS into a ParsedSms; never raises, whatever the input."""
    try:
        return _parse(sender, text)
    except Exception:  # noqa: BLE001 - one odd SMS must never stop a batch; it is kept as unrecognised
        logger.exception("SMS parser failed on a text from %r", as_text(sender)[:40])
        return ParsedSms()


def _parse(sender, text):
    """parse_sms without its safety net, so tests can see any exception."""
    origin = classify_sender(sender)
    t = Text.of(text)
    for provider in _candidates(origin, t):
        parsed = PARSERS[provider](t)
        if parsed is not None:
            return _vet(parsed, origin)
    return _fallback(origin, t)


def _candidates(origin, t):
    """Parsers to try in order: the sender's own; for unknown senders, by what the text names, then
    all.
    """
    if origin.provider:
        return SENDER_PARSERS[origin.provider]
    hinted = [p for p in (_wrapped_sender(t), *_mentioned(t)) if p]
    ordered = list(dict.fromkeys([*hinted, *CONTENT_ORDER]))
    if not bank.CONTEXT.search(t.folded):
        # From an unknown sender, 'received from' alone is no bank alert.
        ordered.remove("bank")
    return ordered


def _wrapped_sender(t):
    """The provider a forwarder names on the first line ('bKash', 'bKash: …', 'From: NAGAD'), if
    any.
    """
    first = t.raw.split("\n", 1)[0]
    first = re.sub(r"^\s*(?:from|sender)\s*:\s*", "", first, flags=re.I)
    head = first.split(":", 1)[0] if ":" in first else first
    return HINT_KEYS.get(hint_key(head)) if len(head) <= 20 else None


def _mentioned(t):
    """Providers named in the text, in order of first mention."""
    found = []
    for provider, pattern in BRAND_MENTIONS.items():
        match = re.search(pattern, t.folded, re.I)
        if match:
            found.append((match.start(), provider))
    return [provider for _, provider in sorted(found)]


def _vet(parsed, origin):
    """The parse with `incoming` withdrawn when the sender cannot vouch for a credit."""
    if not parsed.incoming:
        return parsed
    if origin.kind == "phone":
        # The classic fraud: a 'You have received' text typed and sent from a personal number.
        return replace(parsed, incoming=False, kind="forged")
    if parsed.provider == bank.PROVIDER:
        # Bank alerts only from a listed bank sender (16216 is Dutch-Bangla's, read as Rocket's
        # too).
        trusted = origin.provider in ("bank", "rocket")
    else:
        trusted = origin.provider == parsed.provider
    if trusted:
        return parsed
    kind = "unverified_sender" if origin.kind in ("empty", "unknown") else "forged"
    return replace(parsed, incoming=False, kind=kind)


def _fallback(origin, t):
    """A ParsedSms for texts no parser read: OTPs, notices and promotions, else unrecognised."""
    guess = origin.provider or _wrapped_sender(t) or next(iter(_mentioned(t)), None)
    if looks_like_otp(t) and not re.search(r"tr[xn]\s?id|txn\s?id", t.folded, re.I):
        return ParsedSms(provider=guess, kind="otp", recognised=True)
    if origin.provider and not has_money_or_trx(t):
        # A provider's own text with no sum and no TrxID is a notice (a warning, an offer), not a
        # payment.
        kind = "promotion" if looks_like_promotion(t) else "notice"
        return ParsedSms(provider=guess, kind=kind, recognised=True)
    return ParsedSms(provider=guess)


def validate_template(pattern):
    """A brand's template compiled (case-insensitive), or ValueError saying what is wrong with
    it."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError("SMS template must be a non-empty regular expression.")
    if len(pattern) > MAX_TEMPLATE:
        raise ValueError(f"SMS template is longer than {MAX_TEMPLATE} characters.")
    # RE2: linear in the text whatever the pattern (no catastrophic backtracking); ValueError if
    # refused.
    compiled = compile_template_regex(pattern)
    groups = set(compiled.groupindex)
    missing = [name for name in REQUIRED_TEMPLATE_FIELDS if name not in groups]
    if missing:
        raise ValueError(
            f"SMS template needs the named group(s) {', '.join(missing)}, "
            f"e.g. (?P<amount>[0-9,.]+) and (?P<trx_id>\\w+)."
        )
    unknown = sorted(groups - set(TEMPLATE_FIELDS))
    if unknown:
        raise ValueError(
            f"SMS template has unknown group(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(TEMPLATE_FIELDS)}."
        )
    return compiled


def parse_with_template(pattern, text):
    """Fields from a brand-defined template, or None when it does not match; the caller vets the
    sender.
    """
    compiled = validate_template(pattern)
    t = Text.of(text)
    # Authors write what they see; the folded text also catches look-alike letters in labels.
    match = compiled.search(t.raw) or compiled.search(t.folded)
    if match is None:
        return None
    amount = parse_amount(t.grab(match, "amount"))
    trx_id = re.sub(r"\s+", "", t.grab(match, "trx_id") or "").upper() or None
    if amount is None or trx_id is None:
        return None
    optional = {name: t.grab(match, name) for name in ("counterparty", "balance", "fee", "time")}
    return ParsedSms(
        provider=None,
        incoming=True,
        kind="template",
        amount=amount,
        trx_id=trx_id,
        counterparty=tidy_party(optional["counterparty"]),
        fee=parse_amount(optional["fee"]) if optional["fee"] else None,
        balance=parse_amount(optional["balance"]) if optional["balance"] else None,
        printed_time=(optional["time"] or "").strip() or None,
        recognised=True,
    )


def build_sms_text(provider, amount, trx_id, counterparty, balance, when):
    """A realistic incoming-credit SMS in the provider's own format, for testing without a phone."""
    module = WALLETS.get(provider)
    if module is None:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(WALLETS)}")
    if not isinstance(when, datetime):
        raise TypeError("when must be a datetime.")
    trx_id = as_text(trx_id).strip()
    if not re.fullmatch(r"[A-Za-z0-9]{4,32}", trx_id):
        raise ValueError("trx_id must be 4 to 32 letters and digits.")
    counterparty = as_text(counterparty).strip()
    if not counterparty or "\n" in clean_text(counterparty):
        raise ValueError("counterparty must be a non-empty single line.")
    return module.build(
        _money(amount, "amount"), trx_id, counterparty, _money(balance, "balance"), when
    )


def _money(value, name):
    """A non-negative two-place Decimal; floats are refused because money is never a float."""
    if isinstance(value, (float, bool)) or not isinstance(value, (Decimal, int)):
        raise TypeError(f"{name} must be a Decimal (or an int), not {type(value).__name__}.")
    value = Decimal(value)
    if not value.is_finite() or value < 0 or value >= 10**12:
        raise ValueError(f"{name} must be a finite amount from 0 to 999,999,999,999.99.")
    return value.quantize(CENT)
