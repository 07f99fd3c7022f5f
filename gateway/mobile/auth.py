"""Device authentication: a bearer access token resolves g.device and g.brand."""

from flask import g

from ..api.auth import bearer_token
from ..devices.tokens import device_for_access_token
from ..errors import ApiError
from .http import ProtocolBlueprint


def authenticate_device():
    """Resolve the paired device of the request's access token, or answer 401."""
    token = bearer_token()
    if token is None:
        raise ApiError(
            401,
            "MISSING_TOKEN",
            "Send the device's access token as `Authorization: Bearer <token>`.",
        )
    if not token:
        raise ApiError(401, "INVALID_TOKEN", "Not a valid access token.")
    g.device = device_for_access_token(token)
    g.brand = g.device.brand


def device_blueprint(name, description):
    """A blueprint whose every request comes from a paired device."""
    blp = ProtocolBlueprint(f"mobile_{name}", __name__ + "." + name, description=description)
    blp.before_request(authenticate_device)
    return blp
