"""Developers, webhook endpoints (owners and admins): several URLs, each with its events and its own
secret (shown once), enabled or not, live or test; and replaying an event."""

from flask import abort, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_babel import ngettext
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..domain_errors import DomainError, NotFound
from ..errors import http_status
from ..webhooks import endpoints
from ..webhooks.event_log import get_event, redeliver_event
from . import bp
from .access import (
    WEBHOOKS_MANAGE,
    WEBHOOKS_REDELIVER,
    current_brand,
    panel_livemode,
    requires,
)
from .audit import record_audit
from .forms import ActionForm, attach_error
from .forms_developers import WebhookEndpointForm


def render_endpoints(form=None, status=200, created=None, secret=None, rotated=False):
    """The endpoints tab; right after creating or rotating, that endpoint's secret, once."""
    return render_template(
        "panel/developers_endpoints.html",
        endpoints=endpoints.endpoints_of(current_brand()),
        form=form
        if form is not None
        else WebhookEndpointForm(formdata=None, mode="live" if panel_livemode() else "test"),
        created=created,
        secret=secret,
        rotated=rotated,
    ), status


def brand_endpoint(public_id):
    """The brand's endpoint, either mode; 404 otherwise."""
    try:
        return endpoints.get_endpoint(current_brand(), public_id)
    except NotFound:
        abort(404)


def audit_endpoint(action, endpoint, details=None):
    """The audit row of an endpoint action."""
    record_audit(
        current_user,
        action,
        ("webhook endpoint", endpoint.public_id),
        {"url": endpoint.url, "mode": "live" if endpoint.livemode else "test", **(details or {})},
    )


@bp.get("/developers/webhook-endpoints")
@requires(WEBHOOKS_MANAGE)
def webhook_endpoints():
    """The brand's endpoints, live and test, and the form to add one."""
    return render_endpoints()


@bp.post("/developers/webhook-endpoints")
@requires(WEBHOOKS_MANAGE)
def webhook_endpoint_create():
    """Add an endpoint; its secret is rendered in this answer only."""
    form = WebhookEndpointForm()
    if not form.validate_on_submit():
        return render_endpoints(form, 422)
    try:
        with unit_of_work():
            endpoint, secret = endpoints.create_endpoint(
                current_brand(),
                form.mode.data == "live",
                form.url.data,
                form.enabled_events.data,
                form.description.data,
            )
            audit_endpoint("webhook_endpoint.create", endpoint, {"events": endpoint.enabled_events})
    except DomainError as error:
        attach_error(form, error)
        if not form.errors:
            flash(error.message, "error")
        return render_endpoints(form, http_status(error))
    # Rendered, not redirected: the secret must not survive in a session or a URL.
    return render_endpoints(created=endpoint, secret=secret)


@bp.post("/developers/webhook-endpoints/<public_id>/toggle")
@requires(WEBHOOKS_MANAGE)
def webhook_endpoint_toggle(public_id):
    """Disable an enabled endpoint, or enable a disabled one."""
    endpoint = brand_endpoint(public_id)
    if ActionForm().validate_on_submit():
        with unit_of_work():
            endpoints.update_endpoint(endpoint, {"enabled": not endpoint.enabled})
            action = "enable" if endpoint.enabled else "disable"
            audit_endpoint(f"webhook_endpoint.{action}", endpoint)
        flash(
            _("Endpoint turned on.") if endpoint.enabled else _("Endpoint turned off."), "success"
        )
    return redirect(url_for("panel.webhook_endpoints"))


@bp.post("/developers/webhook-endpoints/<public_id>/rotate")
@requires(WEBHOOKS_MANAGE)
def webhook_endpoint_rotate(public_id):
    """A new secret for the endpoint, shown once here; the old one still signs for the overlap."""
    endpoint = brand_endpoint(public_id)
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.webhook_endpoints"))
    with unit_of_work():
        secret = endpoints.rotate_endpoint_secret(endpoint)
        audit_endpoint("webhook_endpoint.rotate", endpoint)
    return render_endpoints(created=endpoint, secret=secret, rotated=True)


@bp.post("/developers/webhook-endpoints/<public_id>/delete")
@requires(WEBHOOKS_MANAGE)
def webhook_endpoint_delete(public_id):
    """Delete the endpoint: nothing more goes to it; its delivery records stay."""
    endpoint = brand_endpoint(public_id)
    if ActionForm().validate_on_submit():
        with unit_of_work():
            endpoints.delete_endpoint(endpoint)
            audit_endpoint("webhook_endpoint.delete", endpoint)
        flash(_("Endpoint deleted."), "success")
    return redirect(url_for("panel.webhook_endpoints"))


@bp.post("/developers/events/<event_id>/redeliver")
@requires(WEBHOOKS_REDELIVER)
def event_redeliver(event_id):
    """Send an event again to every place it goes now: the URL it went to, and each enabled
    endpoint of its mode that chooses it."""
    brand = current_brand()
    try:
        event = get_event(brand, None, event_id)
    except NotFound:
        abort(404)
    if ActionForm().validate_on_submit():
        try:
            with unit_of_work():
                sent = redeliver_event(brand, event.livemode, event.public_id)
                record_audit(
                    current_user,
                    "event.redeliver",
                    ("event", event.public_id),
                    {"event": event.type, "to": [delivery.url for delivery in sent]},
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(
                ngettext(
                    "Event sent again to %(num)s place; the attempt appears here in a moment.",
                    "Event sent again to %(num)s places; the attempts appear here in a moment.",
                    len(sent),
                ),
                "success",
            )
    return redirect(url_for("panel.webhook_deliveries"))
