"""Pairing a companion phone: a one-time 6-digit code (and its QR), exchanged for tokens and a key.

A 6-digit code (the companion app's protocol) is guessable only with enough tries, so each live code
has a budget: every wrong code sent while it is live is one guess against it (a guess names no
brand, so it counts against every brand's live code), and after GUESS_BUDGET of them the code is
dead, the merchant makes a new one. A guesser's odds are at most GUESS_BUDGET in a million per code,
however many processes or addresses it spreads its tries over: the count is a column of the code.
Every refusal is the same answer, so a guess learns nothing about which codes exist.
"""

import hashlib
import hmac
import json
import secrets
import uuid
from datetime import timedelta

import segno
from flask import current_app

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import ValidationFailed
from ..extensions import db
from ..sealing import derived_key, derived_keys
from .crypto import new_aes_key, seal_device_key
from .models.device import Device, PairingCode
from .notifications import notify_devices
from .tokens import issue_tokens

CODE_TTL = timedelta(minutes=5)
GUESS_BUDGET = 5  # wrong codes a live code survives
REFUSED = "That pairing code is not valid; create a new one in the panel and try again."


def code_hash(code):
    """A keyed hash of a code: a leaked table does not give away live codes."""
    return hmac.new(derived_key("pairing-codes"), code.encode(), hashlib.sha256).hexdigest()


def code_hashes(code):
    """The code's hash under SECRET_KEY and each fallback: a code shown just before a key rotation
    still pairs.
    """
    return [
        hmac.new(key, code.encode(), hashlib.sha256).hexdigest()
        for key in derived_keys("pairing-codes")
    ]


def create_pairing_code(brand):
    """A fresh single-use 6-digit code for the brand, valid for five minutes; returns the code."""
    now = utcnow()
    # Unused codes past their time are worthless; dropping them keeps the table small.
    db.session.execute(
        db.delete(PairingCode).where(
            PairingCode.expires_at < now - CODE_TTL, PairingCode.used_at.is_(None)
        )
    )
    while True:
        code = f"{secrets.randbelow(1_000_000):06d}"
        live = db.session.execute(
            db.select(PairingCode.id).where(
                PairingCode.code_hash == code_hash(code),
                PairingCode.used_at.is_(None),
                PairingCode.expires_at > now,
            )
        ).first()
        if live is None:
            break
    db.session.add(
        PairingCode(
            brand_id=brand.id, code_hash=code_hash(code), created_at=now, expires_at=now + CODE_TTL
        )
    )
    commit_work()
    return code


def server_url(brand=None):
    """The address a phone talks to: the brand's own base URL when it has one, else BASE_URL."""
    return (brand is not None and brand.base_url) or current_app.config["BASE_URL"]


def pairing_qr_payload(code, brand=None):
    """What the pairing QR code holds: {"server_url", "otp"} as compact JSON."""
    return json.dumps({"server_url": server_url(brand), "otp": code}, separators=(",", ":"))


def pairing_qr_svg(code, brand=None):
    """An inline SVG QR code of the pairing payload, for the panel to show beside the code."""
    return segno.make(pairing_qr_payload(code, brand), error="m").svg_inline(
        scale=5, title="Pairing code"
    )


def refused_code():
    """The one answer to every code that does not pair: wrong, used, expired or out of guesses
    alike.
    """
    return ValidationFailed(
        REFUSED,
        [{"field": "pairing_code", "code": "invalid_pairing_code", "message": REFUSED}],
        code="INVALID_PAIRING_CODE",
    )


def count_wrong_guess(now):
    """A wrong code is one guess against every live code, committed at once: the refusal that
    follows rolls back its unit of work, the guess must outlast it."""
    db.session.rollback()
    db.session.execute(
        db.update(PairingCode)
        .where(
            PairingCode.used_at.is_(None),
            PairingCode.expires_at > now,
            PairingCode.failed_guesses < GUESS_BUDGET,
        )
        .values(failed_guesses=PairingCode.failed_guesses + 1)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def redeem_code(code, now):
    """Consume a live code with a guarded UPDATE (unused, unexpired, guesses left); refused_code
    otherwise.
    """
    used = db.session.execute(
        db.update(PairingCode)
        .where(
            PairingCode.code_hash.in_(code_hashes(code)),
            PairingCode.used_at.is_(None),
            PairingCode.expires_at > now,
            PairingCode.failed_guesses < GUESS_BUDGET,
        )
        .values(used_at=now)
        .returning(PairingCode.id, PairingCode.brand_id)
        .execution_options(synchronize_session=False)
    ).all()
    if len(used) != 1:
        # None live; or, against odds of one in a million, two brands' live codes alike: neither
        # pairs.
        if used:
            db.session.rollback()
        else:
            count_wrong_guess(now)
        raise refused_code()
    return used[0]


def pair_device(data):
    """Exchange a pairing code for a device, its tokens and its AES key (shown this once)."""
    now = utcnow()
    code = redeem_code(data["pairing_code"], now)
    # The same phone pairing again replaces its earlier pairing.
    db.session.execute(
        db.update(Device)
        .where(
            Device.brand_id == code.brand_id,
            Device.device_id == data["device_id"],
            Device.revoked_at.is_(None),
        )
        .values(revoked_at=now, revoked_reason="paired again", refresh_token_hash=None)
        .execution_options(synchronize_session=False)
    )
    aes_key = new_aes_key()
    device = Device(
        uuid=str(uuid.uuid4()),
        brand_id=code.brand_id,
        device_id=data["device_id"],
        name=data["device_name"],
        app_version=data.get("app_version"),
        platform=data.get("platform"),
        # Pinned from the start: every refresh must present it. An app that sends none (OwnPay
        # Console) presents its device_id at each refresh, so that is what it is held to.
        fingerprint=data.get("fingerprint") or data["device_id"],
        created_at=now,
    )
    device.aes_key_sealed = seal_device_key(aes_key, device.uuid)
    tokens = issue_tokens(device)
    db.session.add(device)
    db.session.flush()
    db.session.execute(
        db.update(PairingCode)
        .where(PairingCode.id == code.id)
        .values(device_id=device.id)
        .execution_options(synchronize_session=False)
    )
    notify_devices(code.brand_id, "device.paired", f"{device.name} paired", device=device)
    commit_work()
    return device, tokens, aes_key
