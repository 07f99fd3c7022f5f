"""Shared SMS helpers: text clean-up, look-alike folding, money, field finders and the rule
engine."""

import re
import unicodedata
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
# Longest concatenated SMS plus a forwarder's wrapper; bounds regex work on hostile input.
MAX_TEXT = 4096
# More digits than any wallet holds: refuse rather than build absurd Decimals.
MAX_DIGITS = 15

# Greek and Cyrillic letters that render like Latin ones; one character each, so positions survive
# folding.
_LOOKALIKES = str.maketrans(
    {
        "Α": "A",
        "Β": "B",
        "Ε": "E",
        "Ζ": "Z",
        "Η": "H",
        "Ι": "I",
        "Κ": "K",
        "Μ": "M",
        "Ν": "N",
        "Ο": "O",
        "Ρ": "P",
        "Τ": "T",
        "Υ": "Y",
        "Χ": "X",
        "ο": "o",
        "ν": "v",
        "ρ": "p",
        "κ": "k",
        "ι": "i",
        "υ": "u",
        "А": "A",
        "В": "B",
        "С": "C",
        "Е": "E",
        "Н": "H",
        "І": "I",
        "Ј": "J",
        "К": "K",
        "М": "M",
        "О": "O",
        "Р": "P",
        "Ѕ": "S",
        "Т": "T",
        "Х": "X",
        "У": "Y",
        "Ү": "Y",
        "а": "a",
        "с": "c",
        "е": "e",
        "һ": "h",
        "і": "i",
        "ј": "j",
        "к": "k",
        "о": "o",
        "р": "p",
        "ѕ": "s",
        "х": "x",
        "у": "y",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
    }
)

# Regex building blocks; every pattern runs case-insensitively on the folded text.
CURRENCY = r"(?:tk|bdt|taka|৳|টাকা)"
NUMBER = r"[0-9]+(?:,[0-9]+)*(?:\.[0-9]{1,2})?|\.[0-9]{1,2}"
HOUR = r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\s?[ap]\.?m\b)?"
DATE = r"[0-9]{1,2}[-/.](?:[0-9]{1,2}|[a-z]{3})[-/.][0-9]{2,4}"
SLASH_DATE = r"[0-9]{1,2}/[0-9]{1,2}/[0-9]{2,4}"
# Labels that may follow a value with no space in between (flattened texts glue fields together).
_GLUED_LABELS = r"(?-i:TxnID|TrxID|TxnId|TrxId|Ref|Fee|Balance|Bal|NetBal|Comm|Amount|Amt|Date)"
# A counterparty: a phone or masked account number, else a short name up to the end of its clause.
PARTY = (
    r"(?P<cp>\+?[0-9*]{5,}(?![0-9*])|[^\n]{1,100}?(?=\s+is\s+(?:un)?successful|\s+successf"
    r"ul|\s+in\s+your"
    r"|\s*[,;!]|\.+(?:\s|$)|\.(?=(?-i:[A-Z][a-z]))|\s*" + _GLUED_LABELS + r"(?=[\s:.\-]|$)|\n|$))"
)


def money(name="amount"):
    """Regex source for a printed sum with its currency mark ('Tk 1,000.00', 'Tk.00', 'BDT
    45,000')."""
    return rf"(?<![a-z]){CURRENCY}\.?\s*(?P<{name}>{NUMBER})"


M = money()
_TRX = re.compile(r"(?:tr[xn]|tx[nr])\s?(?:id|no)|transaction\s*id", re.I)
_TRX_VALUE = re.compile(
    r"\s*[:#.\-]?\s*(?P<trx>[^\W_]{4,32}?)(?=" + _GLUED_LABELS + r"|[\W_]|$)", re.I
)
_FEE = re.compile(r"(?<![a-z])(?:fee|charge)\s*[:.]?\s*" + money("fee"), re.I)
# A balance label, then separators ('Balance: Tk', 'Bal.: Tk', 'Balance(Tk)', 'Balance - Tk',
# 'Balance Tk:'): a balance that is printed must never read as none, or its credit is held. A hyphen
# counts only between spaces, so '-50.00' is not read as 50.00. In Bangla: ব্যালান্স, ব্যালেন্স.
_BALANCE_SEPARATOR = r"(?:[\s:.(]|\s[-–]\s)*"
_BALANCE = re.compile(
    rf"(?<![a-z])(?:net\s*bal(?:ance)?|balance(?:\s+is)?|bal|c/b|ব্যাল[\u09be\u09c7]ন্স){_BALANCE_SEPARATOR}"
    rf"(?:{CURRENCY}\.?(?:[\s:)]|\s[-–]\s)*)?(?P<balance>{NUMBER})",
    re.I,
)
_MONEY = re.compile(M, re.I)
# Sums right after these labels are fees, commissions or balances, never the transferred amount.
_NOT_AMOUNT = re.compile(
    r"(?<![a-z])(?:fee|charge|vat|comm(?:ission)?|net\s*bal(?:ance)?|bal(?:ance)?(?:\s+is)"
    r"?|c/b)\s*[:.\-]?\s*$",
    re.I,
)
_ANY_TIME = re.compile(rf"(?<![0-9])(?P<time>{DATE}(?:\s+{HOUR})?)", re.I)
_OTP = re.compile(
    r"\b(?:otp|one[\s-]*time[\s-]*pass(?:word|code)|verification\s+code|security\s+code)\b", re.I
)
_PROMO = re.compile(r"https?://|www\.|\b(?:offer|win|discount|click|dial|enjoy|free)\b", re.I)


@dataclass(frozen=True)
class ParsedSms:
    """What one SMS says: who sent the money, how much, under which provider TrxID."""

    provider: str | None = None
    incoming: bool = False
    kind: str = "unknown"
    amount: Decimal | None = None
    trx_id: str | None = None
    counterparty: str | None = None
    fee: Decimal | None = None
    balance: Decimal | None = None
    printed_time: str | None = None
    recognised: bool = False

    @property
    def trx_key(self):
        """The TrxID in the form claims are matched on: look-alikes folded to Latin, upper case."""
        return canonical_trx_id(self.trx_id)


@dataclass(frozen=True)
class Text:
    """An SMS body cleaned for parsing (`raw`, as printed) and its look-alike-folded twin of equal
    length.
    """

    raw: str
    folded: str

    @classmethod
    def of(cls, text):
        """Clean and fold a body once; patterns match `folded`, values are sliced from `raw`."""
        raw = clean_text(text)
        return cls(raw, fold_lookalikes(raw))

    def grab(self, match, group):
        """The text of a named group as printed, or None when the group did not take part."""
        # By index: RE2's matches (brand templates) take group numbers only.
        index = match.re.groupindex.get(group) if match is not None else None
        if index is None or match.start(index) < 0:
            return None
        return self.raw[match.start(index) : match.end(index)]


def as_text(value):
    """Any input coerced to a str, so odd payloads (None, bytes, numbers) cannot break parsing."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return value if isinstance(value, str) else str(value)


def fold_lookalikes(text):
    """Latin letters in place of Greek/Cyrillic look-alikes ('ΝΑGΑD' -> 'NAGAD'); same length."""
    return text.translate(_LOOKALIKES)


def ascii_digits(text):
    """ASCII digits in place of Bangla (০-৯) and any other script's decimal digits; same length."""
    return "".join(
        str(unicodedata.decimal(c)) if not c.isascii() and c.isdecimal() else c for c in text
    )


def clean_text(text):
    """An SMS body normalised for parsing: compatibility forms, ASCII digits, tidy spaces, line
    breaks kept.
    """
    text = unicodedata.normalize("NFKC", as_text(text)[:MAX_TEXT])[:MAX_TEXT]
    lines = []
    for line in text.splitlines():
        # Zero-width and control characters hide between letters and break keyword matches.
        line = "".join(
            " " if c == "\t" else c
            for c in line
            if unicodedata.category(c) not in ("Cc", "Cf") or c == "\t"
        )
        line = re.sub(r"\s+", " ", ascii_digits(line)).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def canonical_trx_id(value):
    """A TrxID reduced to the form a customer types: look-alikes folded, spaces dropped, upper
    case."""
    if not value:
        return None
    # Upper-case before folding: a Greek 'ν' is an 'N' in capitals, though it looks like a 'v'.
    key = re.sub(
        r"\s+", "", fold_lookalikes(ascii_digits(unicodedata.normalize("NFKC", value)).upper())
    )
    return key or None


def to_decimal(number):
    """A two-place Decimal from a printed number ('1,000.00', '.00', '30'); None when it is not
    one."""
    if not number:
        return None
    digits = number.replace(",", "").strip()
    if not re.fullmatch(r"[0-9]*\.?[0-9]+|[0-9]+\.", digits) or len(digits) > MAX_DIGITS + 3:
        return None
    try:
        return Decimal(digits).quantize(CENT, rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return None


def parse_amount(text):
    """A two-place Decimal from a printed sum with or without its currency ('Tk. 900.00', 'BDT
    45,000', '৫০০').
    """
    cleaned = clean_text(text).replace("\n", " ")
    cleaned = re.sub(rf"^\s*{CURRENCY}\.?\s*|\s*{CURRENCY}\.?\s*$", "", cleaned, flags=re.I)
    return to_decimal(cleaned.replace(" ", ""))


def first_amount(t, start=0):
    """The first sum from `start` that no fee, commission or balance label claims."""
    for match in _MONEY.finditer(t.folded, start):
        if not _NOT_AMOUNT.search(t.folded[max(0, match.start() - 24) : match.start()]):
            return to_decimal(t.grab(match, "amount"))
    return None


def find_trx(t):
    """The provider TrxID, upper-cased as printed; the last label wins because a sender's Ref comes
    first.
    """
    found = None
    for label in _TRX.finditer(t.folded):
        value = _TRX_VALUE.match(t.folded, label.end())
        if value:
            found = t.grab(value, "trx").upper()
    return found


def find_fee(t):
    """The fee the provider printed, if any (a commission is not a fee); the last one wins, as a Ref
    comes first.
    """
    matches = list(_FEE.finditer(t.folded))
    return to_decimal(t.grab(matches[-1], "fee")) if matches else None


def find_balance(t):
    """The balance after the transaction; the last one wins because a sender's Ref comes first."""
    matches = list(_BALANCE.finditer(t.folded))
    return to_decimal(t.grab(matches[-1], "balance")) if matches else None


def find_time(t, patterns=()):
    """The printed date and time: the last hit of the first provider pattern that hits, else any
    date.
    """
    for pattern in (*patterns, _ANY_TIME):
        matches = list(pattern.finditer(t.folded))
        if matches:
            return t.grab(matches[-1], "time")
    return None


def find_party(t, pattern):
    """A counterparty from a pattern with a 'cp' group, trimmed of clause punctuation."""
    return tidy_party(t.grab(pattern.search(t.folded), "cp")) if pattern else None


def tidy_party(value):
    """A counterparty without surrounding spaces, quotes or trailing clause punctuation."""
    value = (value or "").strip().strip("'\"‘’`").rstrip(" .,;:").strip()
    return value or None


def looks_like_otp(t):
    """Whether the text is a one-time code or PIN message."""
    return bool(_OTP.search(t.folded))


def looks_like_promotion(t):
    """Whether the text reads like marketing (links, offers)."""
    return bool(_PROMO.search(t.folded))


def has_money_or_trx(t):
    """Whether the text carries a sum or a TrxID label, i.e. might be a transaction we failed to
    read.
    """
    return bool(_MONEY.search(t.folded) or _TRX.search(t.folded))


@dataclass(frozen=True)
class Rule:
    """One message type of a provider: how to spot it and where its amount and counterparty are."""

    kind: str
    incoming: bool
    trigger: re.Pattern
    amount: re.Pattern | None = None
    party: re.Pattern | None = None


def rule(kind, incoming, trigger, amount=None, party=None):
    """A Rule from regex sources, compiled case-insensitively."""
    compiled = [re.compile(p, re.I) if p else None for p in (trigger, amount, party)]
    return Rule(kind, incoming, *compiled)


# Types that are notices when they carry no TrxID (a loan offer, a cashback announcement).
NOTICE_KINDS = frozenset({"otp", "promotion", "notice", "loan", "cashback", "reward", "interest"})

# Money in that is no customer's payment, however the provider words it. These win over a money-in
# rule wherever they appear outside the sender's free text ('You have received Tk 50.00 as
# cashback', '… credited (Reversal) by Tk…'): the earliest trigger cannot tell, the word often
# follows the amount. Their kinds are credits to the balance chain (sms/balance_chain.py).
NOT_A_PAYMENT = (
    rule(
        "refund",
        False,
        r"\brefund(?:s|ed)?\b|\brevers(?:al|ed)\b|\bunsuccessful\b|\breturned\b",
    ),
    rule("cashback", False, r"\bcash[\s-]*back\b"),
    rule("reward", False, r"\b(?:reward|bonus|prize)(?:e?s)?\b"),
    rule("loan", False, r"\bloans?\b"),
    rule("interest", False, r"\binterest\b|\bprofit\b"),
)
# A wallet's free text, typed by whoever sent the money ('Ref rony.', 'Ref: …', 'Ref No: …',
# 'Ref-…'): to the end of its line, since it may hold anything, even 'Fee Tk 5 cashback. Fee'. The
# provider states why money came before it, in its own words. A glued label ('PLCRef:') counts.
REF = re.compile(r"(?:(?<![a-z])ref|(?-i:Ref))(?:erence)?(?![a-z])[^\n]*", re.I)


def pick_rule(rules, t, text=None):
    """The rule whose trigger appears earliest (the message's own header beats words in a Ref); ties
    by order. `text` is the folded text to search, when not all of `t` may speak.
    """
    best = None
    for index, candidate in enumerate(rules):
        match = candidate.trigger.search(t.folded if text is None else text)
        if match and (best is None or match.start() < best[1].start()):
            best = (candidate, match, index)
    return best[:2] if best else (None, None)


def providers_words(t, free_text=None):
    """The folded text with the sender's free text blanked out (same length), so only what the
    provider printed is searched.
    """
    if free_text is None:
        return t.folded
    return free_text.sub(lambda found: " " * len(found.group()), t.folded)


def apply_rules(
    provider, rules, t, time_patterns=(), needs_trx=True, overrides=NOT_A_PAYMENT, free_text=None
):
    """Parse `t` with a provider's rules; None when no rule matches (so another parser may try).

    A money-in rule gives way to the earliest of `overrides` found in the provider's words
    (`free_text` blanked): the amount and counterparty stay as the money-in rule read them.
    """
    chosen, match = pick_rule(rules, t)
    if chosen is None:
        return None
    kind, incoming = chosen.kind, chosen.incoming
    if incoming:
        override, _ = pick_rule(overrides, t, providers_words(t, free_text))
        if override is not None:
            kind, incoming = override.kind, override.incoming
    amount = to_decimal(t.grab(match, "amount"))
    if amount is None and chosen.amount is not None:
        amount = to_decimal(t.grab(chosen.amount.search(t.folded), "amount"))
    if amount is None:
        amount = first_amount(t, match.start())
    if amount is None:
        amount = first_amount(t)
    party = tidy_party(t.grab(match, "cp")) or find_party(t, chosen.party)
    parsed = ParsedSms(
        provider=provider,
        incoming=incoming,
        kind=kind,
        amount=amount,
        trx_id=find_trx(t),
        counterparty=party,
        fee=find_fee(t),
        balance=find_balance(t),
        printed_time=find_time(t, time_patterns),
        recognised=True,
    )
    if needs_trx and parsed.trx_id is None:
        # A wallet transaction always prints its TrxID; without one it is a notice or a text we
        # misread.
        if kind in NOTICE_KINDS:
            return ParsedSms(provider=provider, kind=kind, recognised=True)
        return replace(parsed, incoming=False, kind="unknown", recognised=False)
    return parsed
