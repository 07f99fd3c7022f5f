"""Forms of the Developers pages: generate and revoke API keys, the default webhook URL."""

from urllib.parse import urlsplit

from flask_wtf import FlaskForm
from wtforms import SelectMultipleField, StringField
from wtforms.validators import DataRequired, Length, Optional, ValidationError
from wtforms.widgets import CheckboxInput, ListWidget

from ..accounts.models.api_key import SCOPES
from ..i18n import lazy_gettext as _l
from .forms import options, strip

SCOPE_NAMES = {
    "read": _l("read: look up payments, refunds, customers"),
    "write": _l("write: create payments, refunds, send SMS"),
    "admin": _l("admin: manage API keys (with a super-administrator's e-mail)"),
}


class CheckboxesField(SelectMultipleField):
    """A multiple choice shown as a list of checkboxes."""

    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


class ApiKeyForm(FlaskForm):
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


class RevokeKeyForm(FlaskForm):
    """Revocation by label, confirmed by typing the label again."""

    label = StringField(_l("Label"), filters=[strip], validators=[DataRequired(), Length(max=100)])
    confirm_label = StringField(
        _l("Type the label to confirm"), filters=[strip], validators=[DataRequired()]
    )

    def validate_confirm_label(self, field):
        """The typed label must be the key's label exactly."""
        if field.data != self.label.data:
            raise ValidationError(_l("This is not the key's label."))


class WebhookUrlForm(FlaskForm):
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
