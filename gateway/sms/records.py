"""What a forwarded text becomes when stored: parsed fields, a status and the hash that dedupes
it."""

import hashlib
import json
import re
import uuid
from dataclasses import replace

from ..clock import utcnow
from ..extensions import db
from ..payments.models.payment_method import BANK
from ..states import SMS_IGNORED, SMS_REVIEW, SMS_UNMATCHED, SMS_UNPARSED
from .models.sms_template import SmsTemplate
from .parsing import classify_sender, parse_sms, parse_with_template, sender_provider
from .senders import untrusted_sender_reason


def enabled_templates(brand_id):
    """The brand's own regex templates, tried when the built-in parsers do not recognise a text."""
    return (
        db.session.execute(
            db.select(SmsTemplate)
            .where(SmsTemplate.brand_id == brand_id, SmsTemplate.enabled.is_(True))
            .order_by(SmsTemplate.id)
        )
        .scalars()
        .all()
    )


def wrapped_payload(plaintext):
    """The JSON object a phone wrapped its text in, or None: plain text, or JSON that is no object
    or cannot be read (too deeply nested for the parser included)."""
    if not plaintext.lstrip().startswith("{"):
        return None
    try:
        wrapped = json.loads(plaintext)
    except (ValueError, RecursionError):
        return None
    return wrapped if isinstance(wrapped, dict) else None


def message_text(plaintext):
    """The SMS body inside a decrypted payload: the text itself, or a JSON object's
    body/message/text.
    """
    wrapped = wrapped_payload(plaintext) or {}
    for key in ("body", "message", "text"):
        if isinstance(wrapped.get(key), str):
            return wrapped[key]
    return plaintext


def message_receiver(plaintext):
    """The wallet number a text arrived on, when the phone wraps the text in JSON with `receiver`;
    else ''.
    """
    return receiver_number((wrapped_payload(plaintext) or {}).get("receiver"))


def receiver_number(receiver):
    """A wallet number as the balance chain keys it (its last 11 digits), or '' for none."""
    if not isinstance(receiver, str):
        return ""
    digits = re.sub(r"\D", "", receiver)
    return digits[-11:] if len(digits) >= 6 else ""


def content_hash(sender, body):
    """The identity of a text for dedupe: sender and body, whitespace and case of the sender
    aside."""
    text = f"{sender.strip().lower()}\n{' '.join(body.split())}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_text(sender, body, templates):
    """The built-in parse, else the first brand template that matches (trusted only from its
    provider's sender).
    """
    parsed = parse_sms(sender, body)
    if parsed.recognised:
        return parsed
    for template in templates:
        try:
            found = parse_with_template(template.pattern, body)
        except (
            ValueError
        ):  # a template saved before validation existed; skip it rather than fail the batch
            continue
        if found is not None:
            trusted = sender_provider(sender) == template.provider
            return replace(
                found,
                provider=template.provider,
                incoming=trusted,
                kind="template" if trusted else untrusted_kind(sender),
            )
    return parsed


def untrusted_kind(sender):
    """`forged` for a personal number posing as a provider, `unverified_sender` for any other id."""
    return "forged" if classify_sender(sender).kind == "phone" else "unverified_sender"


def status_for(parsed):
    """unparsed, ignored (not an incoming credit), review (a credit from a sender that is not
    official, kept for the merchant) or unmatched (a credit waiting for its claim)."""
    if not parsed.recognised:
        return SMS_UNPARSED
    # A bank alert has no TrxID: its credit waits for a bank claim of its amount (bank_matching.py).
    if (
        parsed.incoming
        and parsed.amount is not None
        and (parsed.trx_key or parsed.provider == BANK)
    ):
        return SMS_UNMATCHED
    if parsed.kind == "unverified_sender" and parsed.amount is not None:
        return SMS_REVIEW
    return SMS_IGNORED


def trust_note(sender, parsed):
    """Why a credit-shaped text cannot pay by itself (shown in the inbox), or None."""
    if parsed.kind == "unverified_sender":
        return untrusted_sender_reason(sender, parsed.provider or "any provider")
    if parsed.kind == "forged":
        return (
            f"Sent from {sender!r}, a personal number: providers never send payment texts from one"[
                :255
            ]
        )
    return None


def sms_values(device, sender, body, received_at, local_id, parsed, livemode=True):
    """The column values of a new inbound_sms row for one decrypted text, read as `parsed`
    (read_text); `livemode` False for a text simulated for a test payment.
    """
    status = status_for(parsed)
    return {
        "public_id": str(uuid.uuid4()),
        "brand_id": device.brand_id,
        "device_id": device.id,
        "local_id": local_id,
        "sender": sender[:64],
        "body": body,
        "received_at": received_at or utcnow(),
        "content_hash": content_hash(sender, body),
        "provider": parsed.provider,
        "incoming": parsed.incoming,
        "amount": parsed.amount,
        "counterparty": (parsed.counterparty or "")[:64] or None,
        "balance": parsed.balance,
        "printed_time": (parsed.printed_time or "")[:32] or None,
        # Only a text that can pay holds its TrxID's unique slot, so a forged copy cannot block the
        # real one.
        "provider_trx_id": (parsed.trx_key or "")[:64] or None if status == SMS_UNMATCHED else None,
        "status": status,
        "review_reason": trust_note(sender[:64], parsed),
        "created_at": utcnow(),
        "livemode": livemode,
    }
