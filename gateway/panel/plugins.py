"""Developers, the Plugins tab: which dialect each platform's plugin speaks, its keys, a test
IPN."""

from flask import abort, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from wtforms import SelectField, StringField
from wtforms.validators import URL, DataRequired, Length

from ..answer_commit import unit_of_work
from ..compat.dialects import DIALECTS
from ..compat.ipn import send_test_ipn
from ..compat.keys import generate_compat_key, list_compat_keys, revoke_compat_key
from ..compat.platforms import platform_rows
from ..domain_errors import DomainError
from ..errors import http_status
from ..i18n import lazy_gettext as _l
from . import bp
from .access import API_KEYS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import PanelForm, attach_error, options, strip

DIALECT_CHOICES = [(name, module.TITLE) for name, module in DIALECTS.items()]


class CompatKeyForm(PanelForm):
    label = StringField(_l("Label"), filters=[strip], validators=[DataRequired(), Length(max=100)])
    dialect = SelectField(_l("Plugin family"), choices=options(DIALECT_CHOICES))


class TestIpnForm(PanelForm):
    key_id = SelectField(_l("Key"), coerce=str, validate_choice=False)
    url = StringField(
        _l("Your plugin's IPN address"),
        filters=[strip],
        validators=[DataRequired(), Length(max=2048), URL(require_tld=False)],
    )


def active_keys():
    """The brand's active compatibility keys."""
    return [key for key in list_compat_keys(current_brand()) if key.active]


def render_plugins(form=None, test_form=None, status=200, created=None, secret=None, outcome=None):
    """The Plugins tab; right after generating, the new key's secret, once."""
    test_form = test_form or TestIpnForm(formdata=None)
    test_form.key_id.choices = options(
        (str(key.id), f"{key.label} ({DIALECTS[key.dialect].TITLE})") for key in active_keys()
    )
    return render_template(
        "panel/plugins.html",
        platforms=platform_rows(current_brand()),
        dialects=DIALECTS,
        keys=list_compat_keys(current_brand()),
        form=form or CompatKeyForm(formdata=None),
        test_form=test_form,
        created=created,
        secret=secret,
        outcome=outcome,
    ), status


@bp.get("/developers/plugins")
@requires(API_KEYS_MANAGE)
def plugins():
    """Every platform with the dialect and URL to use, the compatibility keys, the test IPN form."""
    return render_plugins()


@bp.post("/developers/plugins/keys")
@requires(API_KEYS_MANAGE)
def compat_key_generate():
    """Generate a key for one dialect; its secret is rendered in this answer only."""
    form = CompatKeyForm()
    if not form.validate_on_submit():
        return render_plugins(form, status=422)
    try:
        with unit_of_work():
            key, secret = generate_compat_key(current_brand(), form.label.data, form.dialect.data)
            record_audit(
                current_user,
                "compat_key.generate",
                key,
                {"label": key.label, "dialect": key.dialect, "display_prefix": key.display_prefix},
            )
    except DomainError as error:
        attach_error(form, error)
        return render_plugins(form, status=http_status(error))
    return render_plugins(created=key, secret=secret)


@bp.post("/developers/plugins/keys/<key_id>/revoke")
@requires(API_KEYS_MANAGE)
def compat_key_revoke(key_id):
    """Revoke a compatibility key: the plugin using it is refused from its next request."""
    with unit_of_work():
        key = revoke_compat_key(current_brand(), key_id)
        record_audit(
            current_user, "compat_key.revoke", key, {"label": key.label, "dialect": key.dialect}
        )
    flash(
        _(
            "The key %(label)s is revoked; requests with it are refused from now on.",
            label=key.label,
        ),
        "success",
    )
    return redirect(url_for("panel.plugins"))


@bp.post("/developers/plugins/test-ipn")
@requires(API_KEYS_MANAGE)
def compat_test_ipn():
    """Post a signed test IPN in the chosen key's dialect to the typed address; show the answer."""
    form = TestIpnForm()
    form.key_id.choices = options((str(key.id), key.label) for key in active_keys())
    if not form.validate_on_submit():
        return render_plugins(test_form=form, status=422)
    key = next((key for key in active_keys() if str(key.id) == form.key_id.data), None)
    if key is None:
        abort(404)
    return render_plugins(test_form=form, outcome=send_test_ipn(key, form.url.data))
