"""Forms of the Developers pages: generate and revoke API keys, the default webhook URL, webhook
endpoints."""

from urllib.parse import urlsplit

from wtforms import SelectField, SelectMultipleField, StringField
from wtforms.validators import DataRequired, Length, Optional, ValidationError
from wtforms.widgets import CheckboxInput, ListWidget

from ..accounts.models.api_key import SCOPES
from ..i18n import lazy_gettext as _l
from ..webhooks.endpoints import CHOICES as ENDPOINT_CHOICES
from ..webhooks.models.endpoint import ALL_EVENTS
from .forms import PanelForm, options, strip

SCOPE_NAMES = {
    "read": _l("read: look up payments, refunds, customers"),
    "write": _l("write: create payments, refunds, send SMS"),
    "admin": _l("admin: manage API keys (with a super-administrator's e-mail)"),
}


class CheckboxesField(SelectMultipleField):
    """A multiple choice shown as a list of checkboxes."""

    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


class ApiKeyForm(PanelForm):
    label = StringField(
        _l("Label"),
        filters=[strip],
        validators=[DataRequired(), Length(max=100)],
        description=_l("Where the key is used, e.g. “Shop server”. Revoking is by this label."),
    )
    scopes = CheckboxesField(
        _l("Scopes"),
        choices=options((scope, SCOPE_NAMES[scope]) for scope in SCOPES),
        default=["read", "write"],
        render_kw={"class": "scope-list"},
    )

    def validate_scopes(self, field):
        """At least one scope; the service checks the names."""
        if not field.data:
            raise ValidationError(_l("Choose at least one scope."))


class RevokeKeyForm(PanelForm):
    """Revocation by label, confirmed by typing the label again."""

    label = StringField(_l("Label"), filters=[strip], validators=[DataRequired(), Length(max=100)])
    confirm_label = StringField(
        _l("Type the label to confirm"), filters=[strip], validators=[DataRequired()]
    )

    def validate_confirm_label(self, field):
        """The typed label must be the key's label exactly."""
        if field.data != self.label.data:
            raise ValidationError(_l("This is not the key's label."))


class WebhookUrlForm(PanelForm):
    webhook_url = StringField(
        _l("Default webhook URL"),
        filters=[strip],
        validators=[Optional(), Length(max=2048)],
        description=_l("Used when a payment has no callback_url of its own. Empty: none."),
    )

    def validate_webhook_url(self, field):
        """An absolute http(s) address; whether it may receive webhooks is the service's call."""
        parts = urlsplit(field.data or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError(_l("Enter an absolute http:// or https:// address."))


MODE_NAMES = {"live": _l("Live: real payments"), "test": _l("Test: test-mode payments only")}


class WebhookEndpointForm(PanelForm):
    """A new webhook endpoint: where, which events, live or test (the service checks the rest)."""

    url = StringField(
        _l("Endpoint URL"),
        filters=[strip],
        validators=[DataRequired(), Length(max=2048)],
        description=_l("Your server's address that receives these webhooks."),
    )
    description = StringField(
        _l("Description"), filters=[strip], validators=[Optional(), Length(max=200)]
    )
    enabled_events = CheckboxesField(
        _l("Events"),
        choices=options((event, event) for event in ENDPOINT_CHOICES),
        default=[ALL_EVENTS],
        render_kw={"class": "scope-list"},
        description=_l("“*” sends every event, those added later too."),
    )
    mode = SelectField(
        _l("Mode"), choices=options(MODE_NAMES.items()), default="live", validators=[DataRequired()]
    )

    def validate_url(self, field):
        """An absolute http(s) address; whether it may receive webhooks is the service's call."""
        parts = urlsplit(field.data or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError(_l("Enter an absolute http:// or https:// address."))

    def validate_enabled_events(self, field):
        """At least one event; the service checks the names."""
        if not field.data:
            raise ValidationError(_l("Choose at least one event."))
