"""AES-256-GCM for the companion app's SMS payloads, and keys derived from SECRET_KEY (or a fallback
while rotating).
"""

import base64
import binascii
import os
import secrets
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app

IV_BYTES = 12
TAG_BYTES = 16


class PayloadError(ValueError):
    """A payload that is not base64, too short, tampered with or sealed under another key."""


def derived_key(purpose):
    """A 32-byte key for one purpose, derived from SECRET_KEY so that purposes never share a key."""
    return _hkdf(current_app.config["SECRET_KEY"], purpose)


def derived_keys(purpose):
    """The purpose's key from SECRET_KEY, then from each SECRET_KEY_FALLBACKS entry: what may still
    verify or open.
    """
    in_use = [current_app.config["SECRET_KEY"], *current_app.config.get("SECRET_KEY_FALLBACKS", [])]
    return [_hkdf(secret, purpose) for secret in dict.fromkeys(in_use)]


@lru_cache(maxsize=16)
def _hkdf(secret, purpose):
    """HKDF-SHA256 of the secret for a purpose (cached: it is asked on every request)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"gateway:{purpose}".encode())
    return hkdf.derive(secret.encode())


def new_aes_key():
    """A fresh device key: 32 random bytes as 64 hex characters."""
    return secrets.token_hex(32)


def encrypt_payload(aes_key_hex, plaintext):
    """base64(IV 12 ‖ ciphertext ‖ tag 16) of a text, as the companion app sends it."""
    iv = os.urandom(IV_BYTES)
    sealed = AESGCM(bytes.fromhex(aes_key_hex)).encrypt(iv, plaintext.encode("utf-8"), None)
    return base64.b64encode(iv + sealed).decode("ascii")


def decrypt_payload(aes_key_hex, payload):
    """The text inside an encrypted_payload; PayloadError when it cannot be trusted."""
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as error:
        raise PayloadError("The payload is not valid base64.") from error
    if len(raw) < IV_BYTES + TAG_BYTES:
        raise PayloadError("The payload is too short to hold an IV and a tag.")
    try:
        plain = AESGCM(bytes.fromhex(aes_key_hex)).decrypt(raw[:IV_BYTES], raw[IV_BYTES:], None)
    except InvalidTag as error:
        raise PayloadError(
            "The payload failed authentication (tampered, or another key)."
        ) from error
    try:
        return plain.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PayloadError("The payload is not UTF-8 text.") from error


def seal_device_key(aes_key_hex, device_uuid):
    """The device key encrypted at rest, bound to its device so sealed keys cannot be swapped."""
    return seal_secret(bytes.fromhex(aes_key_hex), "device-key-at-rest", device_uuid)


def open_device_key(sealed, device_uuid):
    """The device key as 64 hex characters, unsealed with SECRET_KEY or any fallback."""
    return unseal_device_key(sealed, device_uuid)[0]


def unseal_device_key(sealed, device_uuid):
    """(device key hex, whether SECRET_KEY itself sealed it); InvalidTag when no key in use opens
    it.
    """
    secret, current = unseal_secret(sealed, "device-key-at-rest", device_uuid)
    return secret.hex(), current


def seal_secret(secret, purpose, device_uuid):
    """A device's secret bytes encrypted at rest under the purpose's key, bound to the device."""
    iv = os.urandom(IV_BYTES)
    sealed = AESGCM(derived_key(purpose)).encrypt(iv, secret, device_uuid.encode())
    return base64.b64encode(iv + sealed).decode("ascii")


def unseal_secret(sealed, purpose, device_uuid):
    """(secret bytes, whether SECRET_KEY itself sealed it); InvalidTag when no key in use opens
    it.
    """
    raw = base64.b64decode(sealed)
    failure = None
    for index, key in enumerate(derived_keys(purpose)):
        try:
            return AESGCM(key).decrypt(
                raw[:IV_BYTES], raw[IV_BYTES:], device_uuid.encode()
            ), index == 0
        except InvalidTag as error:
            failure = error
    raise failure
