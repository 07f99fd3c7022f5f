"""Outbound SMS: the queue a phone or the SMS provider sends from; queue a message, retry a failed
one.
"""

import marshmallow as ma
from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..api.paging import paginate
from ..domain_errors import DomainError, NotFound
from ..extensions import db
from ..schemas.outbound_sms import OutboundSmsCreateSchema
from ..sms.models.outbound_sms import OutboundSms
from ..sms.outbound import (
    MAX_ATTEMPTS,
    create_outbound_sms,
    list_outbound_sms_query,
    retry_outbound_sms,
)
from . import bp
from .access import OUTBOUND_SMS_SEND, VIEW, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm
from .forms_sms import OUTBOUND_STATUS_NAMES, OutboundSmsForm
from .payments import PER_PAGE, page_number


def status_counts(brand):
    """How many of the brand's messages of the mode shown show each status."""
    shown = OutboundSms.shown_status_sql().label("shown")
    return dict(
        db.session.execute(
            db.select(shown, db.func.count())
            .where(OutboundSms.brand_id == brand.id, OutboundSms.livemode == panel_livemode())
            .group_by(shown)
        ).all()
    )


def render_outbound(form=None, status=200):
    """The queue, newest first and filtered by status, under the form that queues a message."""
    wanted = request.args.get("status")
    filters = {"status": wanted} if wanted in OUTBOUND_STATUS_NAMES else {}
    rows, meta = paginate(
        list_outbound_sms_query(current_brand(), filters, panel_livemode()),
        {"page": page_number(), "per_page": PER_PAGE},
    )
    return render_template(
        "panel/outbound_sms.html",
        messages=rows,
        meta=meta,
        filters=filters,
        counts=status_counts(current_brand()),
        form=form if form is not None else OutboundSmsForm(formdata=None),
        status_names=OUTBOUND_STATUS_NAMES,
        max_attempts=MAX_ATTEMPTS,
    ), status


@bp.get("/outbound-sms")
@requires(VIEW)
def outbound_sms():
    """Every message the brand queued (receipts included), with its attempts and last error."""
    return render_outbound()


@bp.post("/outbound-sms")
@requires(OUTBOUND_SMS_SEND)
def outbound_sms_queue():
    """Queue a message, checked by the API's own schema (E.164 number, 1–1000 characters)."""
    form = OutboundSmsForm()
    if not form.validate_on_submit():
        return render_outbound(form, 422)
    try:
        data = OutboundSmsCreateSchema().load({"to": form.to.data, "body": form.body.data})
    except ma.ValidationError as error:
        for name, messages in error.messages.items():
            field = getattr(form, name, form.to)
            field.errors = list(field.errors) + list(messages)
        return render_outbound(form, 422)
    with unit_of_work():
        message = create_outbound_sms(current_brand(), data, panel_livemode())
        record_audit(
            current_user,
            "outbound_sms.queue",
            ("outbound sms", message.id),
            {"to": message.to_number},
        )
    flash(_("Message to %(to)s queued.", to=message.to_number), "success")
    return redirect(url_for("panel.outbound_sms"))


@bp.post("/outbound-sms/<int:message_id>/retry")
@requires(OUTBOUND_SMS_SEND)
def outbound_sms_retry(message_id):
    """Put a failed message back in the queue, as POST /sms/outbound/{id}/retry does."""
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                message = retry_outbound_sms(current_brand(), message_id, panel_livemode())
                record_audit(
                    current_user,
                    "outbound_sms.retry",
                    ("outbound sms", message.id),
                    {"to": message.to_number},
                )
        except DomainError as error:
            if isinstance(error, NotFound):
                raise
            flash(error.message, "error")
        else:
            flash(_("Message to %(to)s queued again.", to=message.to_number), "success")
    return redirect(url_for("panel.outbound_sms"))
