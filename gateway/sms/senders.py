"""The one table of official sender ids: who may speak for bKash, Nagad, Rocket, Upay and the banks.

A sender id counts only when it equals a listed id exactly, letter case aside. Nothing is folded:
a Greek or Cyrillic look-alike, a hyphen, a space, a trailing dot or a zero-width character makes
another sender, whose texts are kept but never complete a payment by themselves (docs/sms-trust.md).
"""

# Per provider, the ids as phones show them; the first is the one the gateway's own texts use. Every
# spelling listed here is also sent to the phones as a forwarding filter (sms/filter_rules.py).
OFFICIAL_SENDERS = {
    "bkash": ("bKash",),
    "nagad": ("NAGAD",),
    # 16216 is Dutch-Bangla Bank's short code: Rocket's texts and the bank's own account alerts.
    "rocket": ("16216",),
    "upay": ("upay", "UPAY"),
    "bank": (
        "16216",
        "DBBL",
        "BRAC BANK",
        "PUBALI BANK",
        "SONALI BANK",
        "JANATA BANK",
        "AGRANI BANK",
        "RUPALI BANK",
        "CITYBANK",
        "CITY BANK",
        "EBL",
        "IBBL",
        "DHAKA BANK",
        "PRIME BANK",
        "MTB",
        "UCB",
        "SIBL",
        "BANK ASIA",
        "AB BANK",
        "SCB",
        "HSBC",
    ),
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
