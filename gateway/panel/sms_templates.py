"""SMS templates: regular expressions for provider texts the built-in parsers do not know, with a
tester.

Everyone may try a template; saving, switching and deleting them (they decide which texts can pay)
is for super-administrators.
"""

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from ..payments.models.payment_method import PROVIDERS
from ..sms.inbox import get_inbound_sms
from ..sms.parsing import sender_provider
from ..sms.templates import (
    create_template,
    delete_template,
    get_template,
    list_templates,
    set_template_enabled,
    try_template,
)
from . import bp
from .access import SMS_TEMPLATES_MANAGE, VIEW, current_brand, requires
from .audit import record_audit
from .forms import ActionForm, attach_error
from .forms_sms import TemplateForm, TemplateTestForm


def tester_for_sms(sms_id):
    """The tester filled with a stored text (the inbox's "write a template" link), or an empty
    one."""
    form = TemplateTestForm(formdata=None)
    if sms_id:
        sms = get_inbound_sms(current_brand(), sms_id)
        form.sample.data, form.sender.data = sms.body, sms.sender
        guess = sms.provider if sms.provider in PROVIDERS else sender_provider(sms.sender)
        form.provider.data = guess if guess in PROVIDERS else PROVIDERS[0]
    return form


def render_templates(form=None, tester=None, trial=None, status=200):
    """The templates page: the brand's templates, the tester (with its result) and the new-template
    form.
    """
    form = form if form is not None else TemplateForm(formdata=None)
    tester = tester if tester is not None else tester_for_sms(request.args.get("sms"))
    return render_template(
        "panel/sms_templates.html",
        templates=list_templates(current_brand()),
        form=form,
        tester=tester,
        trial=trial,
    ), status


@bp.get("/sms-templates")
@requires(VIEW)
def sms_templates():
    """The brand's templates and the tester."""
    return render_templates()


@bp.post("/sms-templates/test")
@requires(VIEW)
def sms_template_test():
    """Run a pattern on a sample as ingest would; nothing is saved."""
    tester = TemplateTestForm()
    if not tester.validate_on_submit():
        return render_templates(tester=tester, status=422)
    try:
        trial = try_template(
            tester.provider.data, tester.pattern.data, tester.sample.data, tester.sender.data
        )
    except DomainError as error:
        attach_error(tester, error)
        return render_templates(tester=tester, status=http_status(error))
    # What worked in the tester is one click from being saved.
    form = TemplateForm(formdata=None, provider=tester.provider.data, pattern=tester.pattern.data)
    return render_templates(form=form, tester=tester, trial=trial)


@bp.post("/sms-templates")
@requires(SMS_TEMPLATES_MANAGE)
def sms_template_create():
    """Save a template; ingest tries it on every text the built-in parsers do not recognise."""
    form = TemplateForm()
    if not form.validate_on_submit():
        return render_templates(form=form, status=422)
    try:
        with unit_of_work():
            template = create_template(
                current_brand(), form.provider.data, form.name.data, form.pattern.data
            )
            record_audit(
                current_user,
                "sms_template.create",
                template,
                {"name": template.name, "provider": template.provider, "pattern": template.pattern},
            )
    except DomainError as error:
        attach_error(form, error)
        return render_templates(form=form, status=http_status(error))
    flash(_("Template %(name)s saved; it reads texts from now on.", name=template.name), "success")
    return redirect(url_for("panel.sms_templates"))


@bp.post("/sms-templates/<int:template_id>/toggle")
@requires(SMS_TEMPLATES_MANAGE)
def sms_template_toggle(template_id):
    """Switch a template off (ingest skips it) or back on."""
    template = get_template(current_brand(), template_id)
    if ActionForm().validate_on_submit():
        with unit_of_work():
            changed = set_template_enabled(template, not template.enabled)
            if changed:
                record_audit(
                    current_user,
                    "sms_template.enable" if template.enabled else "sms_template.disable",
                    template,
                    {"name": template.name},
                )
        if changed:
            flash(
                _("%(name)s is switched on.", name=template.name)
                if template.enabled
                else _("%(name)s is switched off.", name=template.name),
                "success",
            )
    return redirect(url_for("panel.sms_templates"))


@bp.post("/sms-templates/<int:template_id>/delete")
@requires(SMS_TEMPLATES_MANAGE)
def sms_template_delete(template_id):
    """Delete a template; texts it already read keep what was stored."""
    template = get_template(current_brand(), template_id)
    if ActionForm().validate_on_submit():
        details = {
            "name": template.name,
            "provider": template.provider,
            "pattern": template.pattern,
        }
        target = ("sms template", template.id)
        with unit_of_work():
            delete_template(template)
            record_audit(current_user, "sms_template.delete", target, details)
        flash(_("Template %(name)s deleted.", name=details["name"]), "success")
    return redirect(url_for("panel.sms_templates"))
