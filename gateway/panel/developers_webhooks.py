"""Developers, webhook settings (super-administrators): the default URL, the signing secret, a test
event.
"""

from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..errors import http_status
from ..webhooks.deliveries import rotate_webhook_secret, send_test_webhook, set_webhook_url
from . import bp
from .access import WEBHOOKS_MANAGE, current_brand, panel_livemode, requires
from .audit import record_audit
from .forms import ActionForm, attach_error
from .forms_developers import WebhookUrlForm


def render_webhooks(form=None, status=200, secret=None, rotated=False):
    """The settings tab; the secret appears only when asked for (or just rotated), in that answer
    alone.
    """
    brand = current_brand()
    form = (
        form if form is not None else WebhookUrlForm(formdata=None, webhook_url=brand.webhook_url)
    )
    # Just rotated: until when the old secret still signs X-Service-Signature-Previous (None without
    # an overlap).
    previous_until = brand.webhook_secret_previous_until if rotated else None
    return render_template(
        "panel/developers_webhooks.html",
        form=form,
        secret=secret,
        rotated=rotated,
        previous_until=previous_until,
    ), status


@bp.get("/developers/webhooks")
@requires(WEBHOOKS_MANAGE)
def webhook_settings():
    """The default webhook URL, the secret (hidden until asked for) and the test button."""
    return render_webhooks()


@bp.post("/developers/webhooks/url")
@requires(WEBHOOKS_MANAGE)
def webhook_settings_url():
    """Save the default URL, refused when it may not receive webhooks (e.g. a private address in
    production).
    """
    form = WebhookUrlForm()
    if not form.validate_on_submit():
        return render_webhooks(form, 422)
    try:
        with unit_of_work():
            changed = set_webhook_url(current_brand(), form.webhook_url.data)
            if changed:
                record_audit(
                    current_user,
                    "webhook.url_update",
                    current_brand(),
                    {"webhook_url": [changed["from"], changed["to"]]},
                )
    except DomainError as error:
        attach_error(form, error)
        return render_webhooks(form, http_status(error))
    flash(
        _("Webhook URL saved.") if form.webhook_url.data else _("Webhook URL removed."), "success"
    )
    return redirect(url_for("panel.webhook_settings"))


@bp.post("/developers/webhooks/secret")
@requires(WEBHOOKS_MANAGE)
def webhook_settings_secret():
    """Show the signing secret, in this answer only; who looked is logged."""
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.webhook_settings"))
    with unit_of_work():
        record_audit(current_user, "webhook_secret.view", current_brand())
    return render_webhooks(secret=current_brand().webhook_secret)


@bp.post("/developers/webhooks/secret/rotate")
@requires(WEBHOOKS_MANAGE)
def webhook_settings_rotate():
    """Replace the secret; every attempt from now on is signed with the new one, which is shown once
    here.
    """
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.webhook_settings"))
    with unit_of_work():
        secret = rotate_webhook_secret(current_brand())
        record_audit(current_user, "webhook_secret.rotate", current_brand())
    return render_webhooks(secret=secret, rotated=True)


@bp.post("/developers/webhooks/test")
@requires(WEBHOOKS_MANAGE)
def webhook_settings_test():
    """Send a signed `webhook.test` event to the default URL, then show its delivery record."""
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.webhook_settings"))
    try:
        with unit_of_work():
            delivery = send_test_webhook(current_brand(), livemode=panel_livemode())
            record_audit(
                current_user,
                "webhook.test",
                ("webhook delivery", delivery.id),
                {"url": delivery.url},
            )
    except DomainError as error:
        flash(
            error.message if current_brand().webhook_url else _("Set a webhook URL first."), "error"
        )
        return redirect(url_for("panel.webhook_settings"))
    flash(_("Test event sent to %(url)s.", url=delivery.url), "success")
    return redirect(url_for("panel.webhook_delivery", delivery_id=delivery.id))
