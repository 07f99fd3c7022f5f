"""The companion app's protocol under /api/mobile/v1: pairing, SMS in, outbound SMS out, and its
OpenAPI document; and the forwarder apps' intake under /api/forwarders.
"""

from werkzeug.routing import BaseConverter

from ..api import GatewayApi
from ..errors import MESSAGE_ERROR_PREFIXES
from ..extensions import csrf
from ..schemas.mobile_answers import MobileErrorSchema

URL_PREFIX = "/api/mobile/v1"
FORWARDERS_PREFIX = "/api/forwarders"


class MobileApi(GatewayApi):
    """The merchant API's Api, documenting the companion app's error envelope."""

    ERROR_SCHEMA = MobileErrorSchema


class DeviceRefConverter(BaseConverter):
    """`self` or a device's uuid in a path."""

    regex = "self|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

    @staticmethod
    def schema(converter):
        """The parameter as the document states it."""
        return {"type": "string", "pattern": f"^({DeviceRefConverter.regex})$"}


def register_mobile(app):
    """Attach every device blueprint and /api/mobile/v1/openapi.json; none uses cookies, so none
    needs CSRF tokens.
    """
    from . import config, dashboard, devices, forwarders, notifications, outbound, pairing, sms

    # flask-smorest reads a second Api's settings under its own prefix: the merchant API keeps the
    # plain names.
    app.config.setdefault("MOBILE_OPENAPI_URL_PREFIX", URL_PREFIX)
    app.config.setdefault("MOBILE_OPENAPI_JSON_PATH", "openapi.json")
    # The app shows `error` when it is text: gateway.errors puts the message there, under this
    # prefix.
    app.extensions[MESSAGE_ERROR_PREFIXES] = (URL_PREFIX + "/",)
    api = MobileApi(
        app,
        config_prefix="MOBILE",
        spec_kwargs={
            "title": "Companion app API",
            "version": "1.0.0",
            "openapi_version": "3.0.3",
            "info": {
                "description": "The paired phone's protocol: pairing, SMS in, outbound SMS out."
            },
        },
    )
    # A device is named by `self` or its uuid, so that /devices/heartbeats is no device's path.
    app.url_map.converters["device_ref"] = DeviceRefConverter
    api.register_converter(DeviceRefConverter, DeviceRefConverter.schema)
    api.spec.components.security_scheme("device", {"type": "http", "scheme": "bearer"})
    api.spec.options["security"] = [{"device": []}]
    for module in (pairing, devices, sms, outbound, config, notifications, dashboard):
        csrf.exempt(module.blp)
        api.register_blueprint(module.blp, url_prefix=URL_PREFIX)
    app.extensions["gateway_mobile_api"] = api
    # The forwarders' intake speaks the public apps' formats, not this protocol: outside its
    # OpenAPI document.
    csrf.exempt(forwarders.blp)
    app.register_blueprint(forwarders.blp, url_prefix=FORWARDERS_PREFIX)
