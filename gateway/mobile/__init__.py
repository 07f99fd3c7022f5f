"""The companion app's protocol under /api/mobile/v1: pairing, SMS in, outbound SMS out."""
from ..extensions import csrf

URL_PREFIX = "/api/mobile/v1"


def register_mobile(app):
    """Attach every device blueprint; none uses cookies, so none needs CSRF tokens."""
    from . import config, dashboard, devices, notifications, outbound, pairing, sms

    for module in (pairing, devices, sms, outbound, config, notifications, dashboard):
        csrf.exempt(module.blp)
        app.register_blueprint(module.blp, url_prefix=URL_PREFIX)
