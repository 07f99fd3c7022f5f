"""A webhook endpoint's signing secrets at rest: sealed (gateway/sealing.py), bound to it."""

from ..sealing import InvalidTag, seal, unseal

SEAL_PURPOSE = "webhook-endpoint-secret"


def seal_secret(secret, public_id):
    """The secret encrypted under a key derived from SECRET_KEY, bound to its endpoint's id."""
    return seal(secret.encode(), SEAL_PURPOSE, public_id)


def open_secret(sealed, public_id):
    """The secret in clear; None for none, or when no key in use opens it (a SECRET_KEY rotated
    without keeping the old one in SECRET_KEY_FALLBACKS)."""
    if not sealed:
        return None
    try:
        return unseal(sealed, SEAL_PURPOSE, public_id)[0].decode()
    except (InvalidTag, ValueError):
        return None
