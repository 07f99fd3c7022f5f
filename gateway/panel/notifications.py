"""Notifications (super-administrators): which event goes to which channel, Telegram, thresholds, a
test.

Nothing here sends: saving and testing only write rows; the outbox job sends, and the table of
latest deliveries shows what became of each (failures included, with a "send again").
"""

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user
from wtforms import BooleanField, IntegerField, PasswordField, StringField
from wtforms.validators import InputRequired, Length, Optional

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError
from ..i18n import lazy_gettext as _l
from ..mail.outbox import mail_configured
from ..notifications.catalogue import CHANNEL_LABELS, CHANNELS, EVENT_LABELS, EVENTS, offered
from ..notifications.outbox import (
    channel_ready,
    failed_count,
    recent_deliveries,
    send_test_notification,
)
from ..notifications.sending import send_again
from ..notifications.settings import chosen_channels, settings_for, update_settings
from . import bp
from .access import SETTINGS_MANAGE, current_brand, requires
from .audit import record_audit
from .forms import ActionForm, PanelForm, attach_error, strip


class NotificationSettingsForm(PanelForm):
    email_to = StringField(
        _l("Send e-mail to"),
        filters=[strip],
        validators=[Optional(), Length(max=500)],
        description=_l("One or more addresses, separated by commas."),
    )
    telegram_token = PasswordField(
        _l("Bot token"),
        validators=[Optional(), Length(max=200)],
        description=_l(
            "From @BotFather. Stored encrypted and never shown. Leave empty to keep the saved one."
        ),
    )
    telegram_chat_id = StringField(
        _l("Chat id"),
        filters=[strip],
        validators=[Optional(), Length(max=64)],
        description=_l("The chat, group or channel the bot writes to, e.g. -1001234567890."),
    )
    clear_telegram = BooleanField(_l("Remove the saved bot"))
    offline_minutes = IntegerField(
        _l("A phone is offline after (minutes without a heartbeat)"), validators=[InputRequired()]
    )
    waiting_minutes = IntegerField(
        _l("Flag a payment waiting for its SMS after (minutes)"), validators=[InputRequired()]
    )
    unclaimed_minutes = IntegerField(
        _l("Tell me about an SMS no payment claimed after (minutes)"),
        validators=[InputRequired()],
    )
    notify_back_online = BooleanField(_l("Also tell me when a phone is back online"))


def grid_choice(form_data):
    """{event: [channel]} from the grid's checkboxes (names `channel-<event>-<channel>`)."""
    return {
        event: [c for c in CHANNELS if form_data.get(f"channel-{event}-{c}")] for event in EVENTS
    }


def render_notifications(form=None, status=200, grid=None):
    """The page: the event × channel grid, recipients and Telegram, thresholds, latest
    deliveries."""
    brand = current_brand()
    settings = settings_for(brand.id)
    if form is None:
        form = NotificationSettingsForm(obj=settings)
    chosen = grid or {event: chosen_channels(settings, event) for event in EVENTS}
    return render_template(
        "panel/notifications.html",
        form=form,
        settings=settings,
        events=[(event, EVENT_LABELS[event]) for event in EVENTS],
        channels=[(channel, CHANNEL_LABELS[channel]) for channel in CHANNELS],
        chosen=chosen,
        offered=offered,
        ready={channel: channel_ready(settings, channel) for channel in CHANNELS},
        smtp_ready=mail_configured(brand.id),
        deliveries=recent_deliveries(brand.id),
        failed=failed_count(brand.id),
        action_form=ActionForm(),
    ), status


@bp.route("/notifications", methods=["GET", "POST"])
@requires(SETTINGS_MANAGE)
def notifications():
    """Edit who is told what; the audit log names the fields changed, never the bot token."""
    form = NotificationSettingsForm()
    if not form.is_submitted():
        return render_notifications()
    grid = grid_choice(request.form)
    if not form.validate_on_submit():
        return render_notifications(form, 422, grid)
    brand = current_brand()
    values = {name: field.data for name, field in form._fields.items() if name != "csrf_token"}
    try:
        with unit_of_work():
            changed = update_settings(brand.id, {**values, "channels": grid})
            if changed:
                record_audit(
                    current_user, "notification_settings.update", brand, {"changed": changed}
                )
    except DomainError as error:
        attach_error(form, error)
        return render_notifications(form, 422, grid)
    flash(_("Notification settings saved."), "success")
    return redirect(url_for("panel.notifications"))


@bp.post("/notifications/test")
@requires(SETTINGS_MANAGE)
def notifications_test():
    """Queue a test notification to every channel that is set up; the table below shows the
    outcome."""
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.notifications"))
    with unit_of_work():
        note = send_test_notification(current_brand().id)
    if note is None:
        flash(_("No channel is set up yet: add an e-mail recipient or a Telegram bot."), "error")
    else:
        flash(
            _("A test is on its way; reload this page to see whether each channel took it."),
            "success",
        )
    return redirect(url_for("panel.notifications"))


@bp.post("/notifications/deliveries/<int:delivery_id>/retry")
@requires(SETTINGS_MANAGE)
def notification_retry(delivery_id):
    """Send a failed notification again."""
    if ActionForm().validate_on_submit():
        with unit_of_work():
            moved = send_again(current_brand().id, delivery_id)
        if moved:
            flash(_("The notification will be sent again."), "success")
        else:
            flash(_("Only a failed notification can be sent again."), "info")
    return redirect(url_for("panel.notifications"))
