"""Settings → E-mail (super-administrators): the brand's SMTP server, and a button that sends a
test.
"""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from wtforms import BooleanField, EmailField, IntegerField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Length, NumberRange, Optional

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..extensions import db
from ..i18n import lazy_gettext as _l
from ..mail.outbox import list_mail_query
from ..mail.sending import MailNotSent, send_test_mail
from ..mail.settings import get_mail_settings, normalise_address, save_mail_settings
from . import bp
from .access import SETTINGS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import PanelForm, attach_error, options, strip

SECURITY_NAMES = {
    "starttls": _l("STARTTLS (usually port 587)"),
    "tls": _l("TLS from the start (usually port 465)"),
    "none": _l("None (only for a server on this machine)"),
}


class MailSettingsForm(PanelForm):
    host = StringField(
        _l("SMTP server"), filters=[strip], validators=[DataRequired(), Length(max=255)]
    )
    port = IntegerField(_l("Port"), validators=[Optional(), NumberRange(min=1, max=65535)])
    security = SelectField(
        _l("Security"), choices=options(SECURITY_NAMES.items()), default="starttls"
    )
    username = StringField(
        _l("User name"), filters=[strip], validators=[Optional(), Length(max=255)]
    )
    password = PasswordField(
        _l("Password"),
        validators=[Optional(), Length(max=500)],
        description=_l("Stored encrypted and never shown. Leave empty to keep the saved one."),
    )
    clear_password = BooleanField(_l("Remove the saved password"))
    from_address = EmailField(
        _l("From address"), filters=[strip], validators=[DataRequired(), Length(max=254)]
    )
    from_name = StringField(
        _l("From name"), filters=[strip], validators=[Optional(), Length(max=120)]
    )


class TestMailForm(PanelForm):
    to = EmailField(
        _l("Send a test to"), filters=[strip], validators=[DataRequired(), Length(max=254)]
    )


def render_mail_settings(form=None, test_form=None, status=200):
    """The page: the SMTP form, the test button, and the latest e-mails with their outcome."""
    brand = current_brand()
    settings = get_mail_settings(brand.id)
    if form is None:
        form = MailSettingsForm(obj=settings)
    recent = db.session.execute(list_mail_query(brand.id).limit(20)).scalars().all()
    return render_template(
        "panel/mail_settings.html",
        form=form,
        test_form=test_form or TestMailForm(formdata=None, to=current_user.email),
        settings=settings,
        recent=recent,
    ), status


@bp.route("/settings/email", methods=["GET", "POST"])
@requires(SETTINGS_MANAGE)
def mail_settings():
    """Edit the SMTP settings; the audit log names the fields changed, never the password."""
    brand = current_brand()
    form = MailSettingsForm(obj=get_mail_settings(brand.id))
    if not form.validate_on_submit():
        return render_mail_settings(form, status=422 if form.is_submitted() else 200)
    try:
        with unit_of_work():
            changed = save_mail_settings(brand, {name: f.data for name, f in form._fields.items()})
            if changed:
                record_audit(current_user, "mail_settings.update", brand, {"changed": changed})
    except DomainError as error:
        attach_error(form, error)
        return render_mail_settings(form, status=422)
    flash(_("E-mail settings saved."), "success")
    return redirect(url_for("panel.mail_settings"))


@bp.post("/settings/email/test")
@requires(SETTINGS_MANAGE)
def mail_settings_test():
    """Send a test e-mail now with the saved settings and say what the server answered."""
    brand = current_brand()
    test_form = TestMailForm()
    settings = get_mail_settings(brand.id)
    if not test_form.validate_on_submit():
        return render_mail_settings(test_form=test_form, status=422)
    if settings is None:
        flash(_("Save the SMTP settings first."), "error")
        return redirect(url_for("panel.mail_settings"))
    try:
        to = normalise_address(test_form.to.data, field="to")
        send_test_mail(settings, to)
    except DomainError as error:
        attach_error(test_form, error)
        return render_mail_settings(test_form=test_form, status=422)
    except MailNotSent as failure:
        flash(_("The test e-mail was not sent: %(reason)s", reason=str(failure)), "error")
        return redirect(url_for("panel.mail_settings"))
    flash(_("Test e-mail sent to %(address)s.", address=to), "success")
    return redirect(url_for("panel.mail_settings"))
