"""Forms of "Add a phone": the name a forwarding phone goes by and, optionally, its own signing
key.
"""

import secrets

from wtforms import HiddenField, StringField
from wtforms.validators import DataRequired, Length, Optional

from ..i18n import lazy_gettext as _l
from .forms import PanelForm, strip


class ForwarderForm(PanelForm):
    # One per rendered form: the same form sent again (a reload of the steps page) adds no second
    # phone (gateway/panel/add_phone.py).
    once = HiddenField(default=lambda: secrets.token_urlsafe(16), validators=[Length(max=64)])
    label = StringField(
        _l("Name of the phone"),
        filters=[strip],
        validators=[DataRequired(), Length(max=120)],
        description=_l("How the phone is listed under Devices, e.g. “Counter phone”."),
    )
    signing_key = StringField(
        _l("Signing key (optional)"),
        filters=[strip],
        validators=[Optional(), Length(min=12, max=128)],
        description=_l(
            "Leave empty and the gateway makes a strong one. Or type the key the app shows under "
            "Settings → Webhooks → Signing key: at least 12 characters."
        ),
    )
