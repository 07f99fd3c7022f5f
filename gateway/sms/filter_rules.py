"""What the companion app forwards: the provider sender ids and the keywords that mark payment
texts.
"""

import json
import zlib

from ..extensions import db
from ..payments.models.payment_method import PROVIDERS
from .models.sms_template import SmsTemplate
from .senders import official_senders

# Words of the texts that can pay; the server parses everything forwarded, so these err on the wide
# side.
POSITIVE_KEYWORDS = (
    "received",
    "Cash In",
    "Cash Out",
    "credited",
    "deposited",
    "TrxID",
    "TxnID",
    "Trx ID",
    "Tk",
    "BDT",
    "টাকা",
)
# One-time codes never pay and are nobody's business but the phone owner's.
NEGATIVE_KEYWORDS = ("OTP", "verification code", "one-time password", "one time password")
CHECK_INTERVAL_HOURS = 6


def filter_rules(brand):
    """The rules for a brand's phones; `version` changes whenever the rules do."""
    providers = set(PROVIDERS) | set(
        db.session.execute(
            db.select(SmsTemplate.provider).where(
                SmsTemplate.brand_id == brand.id, SmsTemplate.enabled.is_(True)
            )
        ).scalars()
    )
    # Ties of case ("UPAY", "upay") are broken by the string itself, so `version` is stable across
    # runs.
    senders = sorted(
        {sender for provider in providers for sender in known_senders(provider)},
        key=lambda sender: (sender.lower(), sender),
    )
    rules = {
        "allowed_senders": senders,
        "positive_keywords": list(POSITIVE_KEYWORDS),
        "negative_keywords": list(NEGATIVE_KEYWORDS),
        "check_interval_hours": CHECK_INTERVAL_HOURS,
    }
    version = zlib.crc32(json.dumps(rules, sort_keys=True).encode())
    return {"version": version, **rules}


def known_senders(provider):
    """Every listed sender id of a provider (sms/senders.py), as phones show it."""
    return official_senders(provider)
