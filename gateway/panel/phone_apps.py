"""The Android apps a merchant can install to forward payment texts, as "Add a phone" presents
them: what each is, where to get it, and how it proves a text is its own.

The app ids are the domain's (`Device.app`, gateway/devices/forwarders.py); this table adds only
what the panel shows.
"""

from collections import namedtuple

from ..devices.forwarders import APP_NAMES, FORWARDER_APPS
from ..devices.models.device import COMPANION_APP as OWNPAY_CONSOLE
from ..devices.models.device import SMS_GATEWAY_APP as SMS_GATEWAY
from ..devices.models.device import SMS_TO_URL_APP as SMS_TO_URL
from ..i18n import lazy_gettext as _l

PhoneApp = namedtuple("PhoneApp", "id name summary downloads proof")

PHONE_APPS = (
    PhoneApp(
        OWNPAY_CONSOLE,
        APP_NAMES[OWNPAY_CONSOLE],
        _l(
            "Pairs with a QR code, sends only payment texts, encrypted, and shows your day's "
            "payments on the phone."
        ),
        (("GitHub", "https://github.com/own-pay/OwnPay-Mobile-App"),),
        _l("QR code and a one-time pairing code"),
    ),
    PhoneApp(
        SMS_GATEWAY,
        APP_NAMES[SMS_GATEWAY],
        _l(
            "A free, widely used app (sms-gate.app) that posts each text it receives to a web "
            "address, signed with a key."
        ),
        (
            ("GitHub", "https://github.com/capcom6/android-sms-gateway/releases/latest"),
            ("sms-gate.app", "https://sms-gate.app"),
        ),
        _l("Web address and a signing key"),
    ),
    PhoneApp(
        SMS_TO_URL,
        APP_NAMES[SMS_TO_URL],
        _l(
            "A small free app (the PipraPay companion apps are built on it) that posts each text "
            "to a web address with a header you type in."
        ),
        (
            ("F-Droid", "https://f-droid.org/packages/tech.bogomolov.incomingsmsgateway/"),
            (
                "GitHub",
                "https://github.com/bogkonstantin/android_income_sms_gateway_webhook/releases",
            ),
        ),
        _l("Web address and a secret header"),
    ),
)
APPS_BY_ID = {app.id: app for app in PHONE_APPS}
FORWARDING_APPS = tuple(FORWARDER_APPS)


def app_name(device):
    """The name of the app a device forwards with, e.g. SMS Gateway for Android."""
    return APP_NAMES.get(device.app, device.app)
