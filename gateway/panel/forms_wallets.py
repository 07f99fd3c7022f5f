"""The panel's form of a wallet's API method (docs/wallet-apis.md): the provider, its API root and
its secrets, which are sealed and never shown again in full."""

from wtforms import PasswordField, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional

from ..i18n import lazy_gettext as _l
from .forms import PanelForm, options, strip


class KeyField(TextAreaField):
    """A pasted key: like a password field, never written back into the page."""

    def _value(self):
        return ""


class WalletApiMethodForm(PanelForm):
    """bKash's tokenized checkout or Nagad's merchant API credentials (the service checks each
    field again)."""

    provider = SelectField(_l("Wallet"), choices=options([("bkash", "bKash"), ("nagad", "Nagad")]))
    display_name = StringField(
        _l("Name customers see (optional)"),
        filters=[strip],
        validators=[Optional(), Length(max=80)],
    )
    base_url = StringField(
        _l("API base URL"),
        filters=[strip],
        validators=[DataRequired(), Length(max=500)],
        description=_l("Sandbox: https://tokenized.sandbox.bka.sh/v1.2.0-beta"),
    )
    app_key = PasswordField(
        _l("App key"), filters=[strip], validators=[Optional(), Length(max=4096)]
    )
    app_secret = PasswordField(
        _l("App secret"), filters=[strip], validators=[Optional(), Length(max=4096)]
    )
    username = StringField(
        _l("API username"), filters=[strip], validators=[Optional(), Length(max=4096)]
    )
    password = PasswordField(
        _l("API password"), filters=[strip], validators=[Optional(), Length(max=4096)]
    )

    merchant_id = StringField(
        _l("Nagad merchant ID"), filters=[strip], validators=[Optional(), Length(max=40)]
    )
    merchant_private_key = KeyField(
        _l("Merchant private key"),
        filters=[strip],
        validators=[Optional(), Length(max=4096)],
        description=_l("The private key whose public half Nagad holds (PEM or Nagad's base64)."),
    )
    wallet_public_key = KeyField(
        _l("Nagad public key"),
        filters=[strip],
        validators=[Optional(), Length(max=4096)],
        description=_l("Nagad's own public key, as Nagad sent it."),
    )

    # The secrets each provider takes, by field name (a provider's module lists the same names).
    SECRETS = {
        "bkash": ("app_key", "app_secret", "username", "password"),
        "nagad": ("merchant_id", "merchant_private_key", "wallet_public_key"),
    }

    def secrets(self):
        """The chosen provider's secrets as typed."""
        return {name: getattr(self, name).data for name in self.SECRETS[self.provider.data]}
