"""The one table of official sender ids: who may speak for bKash, Nagad, Rocket, Upay and the banks.

A sender id counts only when it equals a listed id exactly, letter case aside. Nothing is folded:
a Greek or Cyrillic look-alike, a hyphen, a space, a trailing dot or a zero-width character makes
another sender, whose texts are kept but never complete a payment by themselves (docs/sms-trust.md).
"""

import re

# Per bank, the ids its account alerts come from (16216 is Dutch-Bangla Bank's short code: Rocket's
# texts and the bank's own alerts). A bank method's alert must come from its bank's ids
# (sms/bank_matching.py); the keys are the names bank_of_name() knows, LISTED_BANKS among them.
BANK_SENDERS = {
    "Dutch-Bangla Bank": ("16216", "DBBL"),
    "BRAC Bank": ("BRAC BANK",),
    "Pubali Bank": ("PUBALI BANK",),
    "Sonali Bank": ("SONALI BANK",),
    "Janata Bank": ("JANATA BANK",),
    "Agrani Bank": ("AGRANI BANK",),
    "Rupali Bank": ("RUPALI BANK",),
    "City Bank": ("CITYBANK", "CITY BANK"),
    "Eastern Bank": ("EBL",),
    "Islami Bank": ("IBBL",),
    "Dhaka Bank": ("DHAKA BANK",),
    "Prime Bank": ("PRIME BANK",),
    "Mutual Trust Bank": ("MTB",),
    "United Commercial Bank": ("UCB",),
    "Social Islami Bank": ("SIBL",),
    "Bank Asia": ("BANK ASIA",),
    "AB Bank": ("AB BANK",),
    "Standard Chartered Bank": ("SCB",),
    "HSBC": ("HSBC",),
}
# Other names a merchant may type for a bank (its own name and its sender ids with letters count).
BANK_ALIASES = {
    "Islami Bank Bangladesh": "Islami Bank",
    "The Hongkong and Shanghai Banking Corporation": "HSBC",
}

# Per provider, the ids as phones show them; the first is the one the gateway's own texts use. Every
# spelling listed here is also sent to the phones as a forwarding filter (sms/filter_rules.py).
OFFICIAL_SENDERS = {
    "bkash": ("bKash",),
    "nagad": ("NAGAD",),
    "rocket": ("16216",),  # Dutch-Bangla Bank's short code: Rocket and the bank's alerts
    "upay": ("upay", "UPAY"),
    "bank": tuple(sender for senders in BANK_SENDERS.values() for sender in senders),
}
# Which parsers a sender may speak through: 16216 carries both Rocket and Dutch-Bangla Bank alerts.
SENDER_PARSERS = {
    "bkash": ("bkash",),
    "nagad": ("nagad",),
    "rocket": ("rocket", "bank"),
    "upay": ("upay",),
    "bank": ("bank",),
}

_LOOKUP = {}
for _provider, _ids in OFFICIAL_SENDERS.items():
    for _id in _ids:
        # A wallet's own id wins over the bank list: 16216 is looked up as Rocket (which also reads
        # bank alerts).
        _LOOKUP.setdefault(_id.lower(), _provider)


def sender_key(sender):
    """The lookup key of a sender id: lower case, ASCII only; None for anything else.

    ASCII first: str.lower() maps the Kelvin sign (U+212A) to 'k' and dotted capital I to 'i',
    so lowering before that check would let a look-alike in.
    """
    if not isinstance(sender, str) or not sender or not sender.isascii():
        return None
    return sender.lower()


def official_provider(sender):
    """The provider whose official sender id this is exactly ('bkash' … 'bank'), else None."""
    key = sender_key(sender)
    return _LOOKUP.get(key) if key else None


def is_official(sender, provider):
    """Whether `sender` is one of `provider`'s listed ids (16216 counts for Rocket and for bank
    alerts).
    """
    key = sender_key(sender)
    return bool(key) and key in {s.lower() for s in OFFICIAL_SENDERS.get(provider, ())}


_NAME_NOISE = {"the", "ltd", "limited", "plc"}


def bank_name_key(name):
    """A bank's name reduced to what tells banks apart: its ASCII letters and digits in lower case,
    without "the", "Ltd", "Limited", "PLC" or "bank" ("Dutch Bangla Bank PLC" = "dutch-bangla")."""
    words = re.findall(r"[a-z0-9]+", str(name or "").lower())
    return "".join(w for w in words if w not in _NAME_NOISE).replace("bank", "") or None


# A merchant's own free text, so spellings are folded here, unlike a sender id.
_BANK_BY_NAME = {bank_name_key(name): bank for name, bank in BANK_ALIASES.items()}
for _bank, _ids in BANK_SENDERS.items():
    for _name in (_bank, *(i for i in _ids if not i.isdigit())):
        _BANK_BY_NAME[bank_name_key(_name)] = _bank
_BANK_BY_SENDER = {i.lower(): bank for bank, ids in BANK_SENDERS.items() for i in ids}


def bank_of_name(name):
    """The known bank (a BANK_SENDERS key) a method's free-text bank_name names, else None."""
    key = bank_name_key(name)
    return _BANK_BY_NAME.get(key) if key else None


def bank_of_sender(sender):
    """The bank whose alerts come from this sender id exactly (letter case aside), else None."""
    key = sender_key(sender)
    return _BANK_BY_SENDER.get(key) if key else None


def official_senders(provider):
    """The listed ids of a provider, as phones show them (empty for an unknown provider)."""
    return OFFICIAL_SENDERS.get(provider, ())


def untrusted_sender_reason(sender, provider):
    """Why a credit from this sender cannot pay by itself (shown in the panel)."""
    listed = ", ".join(official_senders(provider)) or "none"
    return (
        f"Sender {sender!r} is not an official sender id of {provider} (listed: {listed}); "
        "the text cannot complete a payment by itself"
    )[:255]
