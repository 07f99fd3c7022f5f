"""What the companion app forwards: the provider sender ids and the keywords that mark payment texts."""
import json
import zlib

from ..extensions import db
from ..models import PROVIDERS, SmsTemplate
from .sms_parsing import sender_for

# Words of the texts that can pay; the server parses everything forwarded, so these err on the wide side.
POSITIVE_KEYWORDS = ("received", "Cash In", "Cash Out", "credited", "deposited", "TrxID", "TxnID", "Trx ID",
                     "Tk", "BDT", "টাকা")
# One-time codes never pay and are nobody's business but the phone owner's.
NEGATIVE_KEYWORDS = ("OTP", "verification code", "one-time password", "one time password")
CHECK_INTERVAL_HOURS = 6


def filter_rules(brand):
    """The rules for a brand's phones; `version` changes whenever the rules do."""
    providers = set(PROVIDERS) | set(db.session.execute(
        db.select(SmsTemplate.provider).where(SmsTemplate.brand_id == brand.id, SmsTemplate.enabled.is_(True))
    ).scalars())
    senders = sorted({sender for sender in map(known_sender, providers) if sender}, key=str.lower)
    rules = {"allowed_senders": senders, "positive_keywords": list(POSITIVE_KEYWORDS),
             "negative_keywords": list(NEGATIVE_KEYWORDS), "check_interval_hours": CHECK_INTERVAL_HOURS}
    version = zlib.crc32(json.dumps(rules, sort_keys=True).encode())
    return {"version": version, **rules}


def known_sender(provider):
    """The sender id a provider's texts come from, or None for a provider the parsers do not know."""
    try:
        return sender_for(provider)
    except (KeyError, ValueError):
        return None
