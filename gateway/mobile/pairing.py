"""Pairing and token refresh: the only device endpoints that take no access token."""

from ..answer_commit import unit_of_work
from ..api.paging import single
from ..devices.pairing import pair_device
from ..devices.tokens import rotate_tokens
from ..rate_limits import limited
from ..schemas.common import envelope
from ..schemas.mobile import PairDeviceSchema, TokenRefreshSchema
from ..schemas.mobile_answers import DeviceTokensSchema, PairedDeviceSchema
from .http import ProtocolBlueprint

blp = ProtocolBlueprint(
    "mobile_pairing", __name__, description="Pairing a phone and refreshing its tokens."
)


@blp.post("/devices")
@blp.doc(security=[])
@limited("10/minute", scope="pairing")
@blp.arguments(PairDeviceSchema())
@blp.response(201, envelope(PairedDeviceSchema))
def pair(data):
    """Exchange a one-time pairing code for tokens and an AES key; the fingerprint (or, without
    one, the device_id) is pinned for every refresh.

    Every code that does not pair gets the same 422 INVALID_PAIRING_CODE, whatever was wrong.
    """
    with unit_of_work():
        device, tokens, aes_key = pair_device(data)
        answer = {**tokens, "aes_key": aes_key, "device_uuid": device.uuid}
    return single(answer)


@blp.post("/devices/token-refreshes")
@blp.doc(security=[])
@limited("30/minute", scope="token-refresh")
@blp.arguments(TokenRefreshSchema())
@blp.response(200, envelope(DeviceTokensSchema))
def refresh_tokens(data):
    """Rotate both tokens; a refresh token works once, with the fingerprint pinned at pairing."""
    with unit_of_work():
        device, tokens = rotate_tokens(data["refresh_token"], data["fingerprint"])
        answer = {**tokens, "device_uuid": device.uuid}
    return single(answer)
