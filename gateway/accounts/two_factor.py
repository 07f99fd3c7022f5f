"""Two-factor sign-in for panel users: TOTP (RFC 6238, pyotp) and ten single-use recovery codes.

The secret is sealed with AES-GCM under a key derived from SECRET_KEY (bound to the user's id) and
is shown only while enrolling; recovery codes are stored as SHA-256 hashes (80 random bits each, so
a plain hash suffices). A code is accepted once: the time step it matched is written with a guarded
UPDATE, so a replayed or racing second use of the same code fails.
"""

import hashlib
import hmac
import secrets

import pyotp
import segno

from ..answer_commit import commit_work
from ..clock import utcnow
from ..domain_errors import field_error, invalid_state
from ..extensions import db
from ..sealing import InvalidTag, seal, unseal
from .models.user import RecoveryCode, User

PURPOSE = "totp-secret-at-rest"
RECOVERY_CODES = 10
RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i to misread
RECOVERY_LENGTH = 16
# A code from the step before or after the current one is accepted too (clock drift of ±30 s).
VALID_WINDOW = 1


def new_totp_secret():
    """A fresh 160-bit base32 TOTP secret."""
    return pyotp.random_base32(32)


def seal_totp_secret(secret, user_id):
    """The secret encrypted at rest, bound to its user so sealed secrets cannot be swapped between
    rows.
    """
    return seal(secret.encode(), PURPOSE, f"user:{user_id}")


def open_totp_secret(sealed, user_id):
    """The secret, unsealed with SECRET_KEY or any fallback; InvalidTag when no key in use opens
    it."""
    return unseal(sealed, PURPOSE, f"user:{user_id}")[0]


def provisioning_uri(user, secret):
    """The otpauth:// address an authenticator app reads from the QR code."""
    return pyotp.TOTP(secret).provisioning_uri(name=user.email, issuer_name=user.brand.name)


def qr_data_uri(uri):
    """The QR code of an address as an inline SVG data URI (no request leaves the page)."""
    return segno.make(uri, error="m").svg_data_uri(scale=5, border=2)


def start_enrolment(user):
    """A new pending secret for a user without two-factor; returns it (shown once, on this page)."""
    if user.two_factor_enabled:
        raise invalid_state("Two-factor sign-in is already on.")
    secret = new_totp_secret()
    user.totp_secret_sealed = seal_totp_secret(secret, user.id)
    user.totp_last_step = None
    commit_work()
    return secret


def pending_secret(user):
    """The secret of an enrolment begun but not confirmed, or None."""
    if user.two_factor_enabled or not user.totp_secret_sealed:
        return None
    try:
        return open_totp_secret(user.totp_secret_sealed, user.id).decode()
    except (InvalidTag, ValueError):
        return None


def normalised(code):
    """A code as typed, without spaces or dashes, lower-cased."""
    return "".join((code or "").split()).replace("-", "").lower()


def matching_step(secret, code):
    """The time step a 6-digit code belongs to (now, or one step either side), or None."""
    if not (len(code) == 6 and code.isascii() and code.isdigit()):
        return None
    totp = pyotp.TOTP(secret)
    now = totp.timecode(utcnow())
    for step in range(now - VALID_WINDOW, now + VALID_WINDOW + 1):
        if hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def claim_step(user, step):
    """Record a step as used, guarded: False when it (or a later one) was used already."""
    claimed = db.session.execute(
        db.update(User)
        .where(
            User.id == user.id,
            db.or_(User.totp_last_step.is_(None), User.totp_last_step < step),
        )
        .values(totp_last_step=step)
        .execution_options(synchronize_session=False)
    ).rowcount
    return claimed == 1


def recovery_hash(code):
    """The stored form of a recovery code."""
    return hashlib.sha256(normalised(code).encode()).hexdigest()


def use_recovery_code(user, code):
    """Spend one unused recovery code, guarded: True once, False for an unknown or spent one."""
    spent = db.session.execute(
        db.update(RecoveryCode)
        .where(
            RecoveryCode.user_id == user.id,
            RecoveryCode.code_hash == recovery_hash(code),
            RecoveryCode.used_at.is_(None),
        )
        .values(used_at=utcnow())
        .execution_options(synchronize_session=False)
    ).rowcount
    return spent == 1


def verify_second_factor(user, code):
    """'totp' or 'recovery' when the code passes (and is spent), else None; the caller commits."""
    if not user.two_factor_enabled:
        return None
    code = normalised(code)
    if len(code) == RECOVERY_LENGTH:
        return "recovery" if use_recovery_code(user, code) else None
    try:
        secret = open_totp_secret(user.totp_secret_sealed, user.id).decode()
    except (InvalidTag, ValueError):
        return None
    step = matching_step(secret, code)
    return "totp" if step is not None and claim_step(user, step) else None


def new_recovery_codes(user):
    """Replace the user's recovery codes with ten fresh ones; returns them as shown
    (xxxx-xxxx-xxxx-xxxx).
    """
    db.session.execute(db.delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(RECOVERY_LENGTH))
        codes.append("-".join(raw[i : i + 4] for i in range(0, RECOVERY_LENGTH, 4)))
        db.session.add(RecoveryCode(user_id=user.id, code_hash=recovery_hash(raw)))
    return codes


def confirm_enrolment(user, code):
    """Turn two-factor on with a first code from the pending secret; returns the ten recovery
    codes."""
    secret = pending_secret(user)
    if secret is None:
        raise invalid_state("Start again: there is no enrolment waiting for a code.")
    step = matching_step(secret, normalised(code))
    if step is None or not claim_step(user, step):
        raise field_error("code", "The code is not correct. Check the phone's clock and try again.")
    enabled = db.session.execute(
        db.update(User)
        .where(
            User.id == user.id,
            User.totp_enabled_at.is_(None),
            User.totp_secret_sealed == user.totp_secret_sealed,
        )
        .values(totp_enabled_at=utcnow())
        .execution_options(synchronize_session=False)
    ).rowcount
    if enabled != 1:
        db.session.rollback()
        raise invalid_state("Two-factor sign-in was turned on meanwhile.")
    codes = new_recovery_codes(user)
    commit_work()
    db.session.refresh(user)
    return codes


def check_password_and_code(user, password, code):
    """Both proofs a change to two-factor needs, each refused on its own field."""
    if not user.check_password(password or ""):
        raise field_error("password", "The password is not correct.")
    if verify_second_factor(user, code) is None:
        raise field_error("code", "The code is not correct, or was used already.")


def disable_two_factor(user, password, code):
    """Turn two-factor off after the password and a code (or a recovery code)."""
    check_password_and_code(user, password, code)
    return reset_two_factor(user)


def reset_two_factor(user):
    """Turn two-factor off without proofs: for the operator (CLI) when a user lost phone and
    codes."""
    db.session.execute(db.delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    user.totp_secret_sealed = None
    user.totp_enabled_at = None
    user.totp_last_step = None
    commit_work()
    return user


def regenerate_recovery_codes(user, password, code):
    """Ten new recovery codes (the old ones stop working) after the password and a code."""
    check_password_and_code(user, password, code)
    codes = new_recovery_codes(user)
    commit_work()
    return codes


def recovery_codes_left(user):
    """How many unused recovery codes the user has."""
    return db.session.execute(
        db.select(db.func.count(RecoveryCode.id)).where(
            RecoveryCode.user_id == user.id, RecoveryCode.used_at.is_(None)
        )
    ).scalar_one()
