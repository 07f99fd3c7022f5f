"""Pairing and token refresh: the only device endpoints that take no access token."""

from ..answer_commit import unit_of_work
from ..devices.pairing import pair_device
from ..devices.tokens import rotate_tokens
from ..rate_limits import limited
from ..schemas.mobile import PairDeviceSchema, TokenRefreshSchema
from .http import ProtocolBlueprint, ok

blp = ProtocolBlueprint(
    "mobile_pairing", __name__, description="Pairing a phone and refreshing its tokens."
)


@blp.post("/devices")
@blp.doc(security=[])
@limited("10/minute", scope="pairing")
@blp.arguments(PairDeviceSchema())
def pair(data):
    """Exchange a one-time pairing code and the phone's fingerprint for tokens and an AES key.

    Every code that does not pair gets the same 422 INVALID_PAIRING_CODE, whatever was wrong.
    """
    with unit_of_work():
        device, tokens, aes_key = pair_device(data)
        answer = {**tokens, "aes_key": aes_key, "device_uuid": device.uuid}
    return ok(answer, 201)


@blp.post("/devices/token-refreshes")
@blp.doc(security=[])
@limited("30/minute", scope="token-refresh")
@blp.arguments(TokenRefreshSchema())
def refresh_tokens(data):
    """Rotate both tokens; a refresh token works once."""
    with unit_of_work():
        device, tokens = rotate_tokens(data["refresh_token"], data["fingerprint"])
        answer = {**tokens, "device_uuid": device.uuid}
    return ok(answer)
