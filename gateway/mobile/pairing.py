"""Pairing and token refresh: the only device endpoints that take no access token."""
from flask import Blueprint

from ..extensions import limiter
from ..schemas.mobile import PairDeviceSchema, TokenRefreshSchema
from ..devices.tokens import pin_fingerprint, rotate_tokens
from ..devices.pairing import pair_device
from .http import load, ok

blp = Blueprint("mobile_pairing", __name__)


@blp.post("/devices")
@limiter.limit("10/minute")
def pair():
    """Exchange a one-time pairing code for tokens and the device's AES key."""
    data = load(PairDeviceSchema)
    device, tokens, aes_key = pair_device(data)
    pin_fingerprint(device, data["fingerprint"])
    return ok({**tokens, "aes_key": aes_key, "device_uuid": device.uuid}, 201)


@blp.post("/devices/token-refreshes")
@limiter.limit("30/minute")
def refresh_tokens():
    """Rotate both tokens; a refresh token works once."""
    data = load(TokenRefreshSchema)
    device, tokens = rotate_tokens(data["refresh_token"], data["fingerprint"])
    return ok({**tokens, "device_uuid": device.uuid})
