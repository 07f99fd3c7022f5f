"""AES-256-GCM for the companion app's SMS payloads, and each device's key sealed at rest
(gateway/sealing.py).
"""

import base64
import binascii
import os
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..sealing import IV_BYTES, seal, unseal

DEVICE_KEY_PURPOSE = "device-key-at-rest"
TAG_BYTES = 16


class PayloadError(ValueError):
    """A payload that is not base64, too short, tampered with or sealed under another key."""


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
    return seal(bytes.fromhex(aes_key_hex), DEVICE_KEY_PURPOSE, device_uuid)


def open_device_key(sealed, device_uuid):
    """The device key as 64 hex characters, unsealed with SECRET_KEY or any fallback."""
    return unseal_device_key(sealed, device_uuid)[0]


def unseal_device_key(sealed, device_uuid):
    """(device key hex, whether SECRET_KEY itself sealed it); InvalidTag when no key in use opens
    it.
    """
    secret, current = unseal(sealed, DEVICE_KEY_PURPOSE, device_uuid)
    return secret.hex(), current
