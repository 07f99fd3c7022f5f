"""Keys derived from SECRET_KEY, one per purpose, and secrets sealed at rest under them (AES-GCM).

Every secret the gateway keeps at rest (a device's AES key, a forwarder's signing key, an SMTP
password, a Telegram bot token, a TOTP secret, a compatibility key) is sealed here, bound to the row
it belongs to so that sealed values cannot be swapped between rows; one sealed under a
SECRET_KEY_FALLBACKS entry still opens while the keys rotate.
"""

import base64
import os
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app

IV_BYTES = 12
__all__ = ["IV_BYTES", "InvalidTag", "derived_key", "derived_keys", "seal", "unseal"]


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


def seal(secret, purpose, bound_to):
    """base64(IV ‖ ciphertext ‖ tag) of the secret bytes under the purpose's key, bound to
    `bound_to` (the text naming its row)."""
    iv = os.urandom(IV_BYTES)
    sealed = AESGCM(derived_key(purpose)).encrypt(iv, secret, bound_to.encode())
    return base64.b64encode(iv + sealed).decode("ascii")


def unseal(sealed, purpose, bound_to):
    """(secret bytes, whether SECRET_KEY itself sealed it); InvalidTag when no key in use opens it,
    ValueError when `sealed` is not base64.
    """
    raw = base64.b64decode(sealed, validate=True)
    failure = InvalidTag()
    for index, key in enumerate(derived_keys(purpose)):
        try:
            secret = AESGCM(key).decrypt(raw[:IV_BYTES], raw[IV_BYTES:], bound_to.encode())
            return secret, index == 0
        except InvalidTag as error:
            failure = error
    raise failure
