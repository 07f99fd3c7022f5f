"""Add a phone: pick the app, then its steps with the exact address and key to type, and a live
check that shows the phone's first heartbeat or text.

OwnPay Console pairs with the existing pairing page (devices.py); the two forwarding apps get a
forwarder whose secrets are rendered once, in the answer to the form, never in a URL or session.
Adding a phone is for owners and admins (devices.pair), as pairing is.
"""

import json
import shlex

from flask import abort, flash, jsonify, redirect, render_template, session, url_for
from flask_babel import gettext as _
from flask_login import current_user

from ..answer_commit import unit_of_work
from ..devices.brand_devices import get_device
from ..devices.forwarders import create_forwarder
from ..devices.pairing import server_url
from ..domain_errors import DomainError
from ..errors import http_status
from . import bp
from .access import DEVICES_PAIR, VIEW, current_brand, requires
from .audit import record_audit
from .device_activity import first_contact, paired_with
from .devices import companion_app_url, unreachable_by_phone
from .forms import attach_error
from .forms_devices import ForwarderForm
from .phone_apps import APPS_BY_ID, FORWARDING_APPS, PHONE_APPS, SMS_GATEWAY

# The session remembers the last few "Add a phone" forms it sent (their `once`, no secret).
ADDED = "added_phones"
REMEMBERED = 5


@bp.get("/devices/add")
@requires(DEVICES_PAIR)
def add_phone():
    """The apps a merchant can install, side by side, to pick one."""
    return render_template("panel/devices_add.html", apps=PHONE_APPS)


def phone_app(app_id):
    """The app named in the URL, or 404."""
    app = APPS_BY_ID.get(app_id)
    if app is None:
        abort(404)
    return app


def render_app_page(app, form=None, status=200):
    """An app's page before anything is made: where to get it, and the form (or the QR button)."""
    address = server_url(current_brand())
    return render_template(
        "panel/devices_add_app.html",
        app=app,
        form=form if form is not None else ForwarderForm(formdata=None),
        server_url=address,
        unreachable=unreachable_by_phone(address),
        companion_url=companion_app_url(),
    ), status


@bp.get("/devices/add/<app_id>")
@requires(DEVICES_PAIR)
def add_phone_app(app_id):
    """One app's first step: install it; then name the phone (or show the pairing QR code)."""
    return render_app_page(phone_app(app_id))


@bp.post("/devices/add/<app_id>")
@requires(DEVICES_PAIR)
def add_forwarder(app_id):
    """Make a forwarder for a forwarding app and show, once, the address and key to type into it."""
    app = phone_app(app_id)
    if app.id not in FORWARDING_APPS:
        abort(404)
    form = ForwarderForm()
    if not form.validate_on_submit():
        return render_app_page(app, form, 422)
    if form.once.data and form.once.data in session.get(ADDED, []):
        flash(
            _(
                "That phone was added already; its address and key were shown once. It is "
                "listed below: if the key was lost, revoke it and add it again."
            ),
            "info",
        )
        return redirect(url_for("panel.devices"))
    own_key = form.signing_key.data if app.id == SMS_GATEWAY else None
    try:
        with unit_of_work():
            device, credentials = create_forwarder(
                current_brand(), app.id, form.label.data, signing_key=own_key or None
            )
            record_audit(
                current_user,
                "device.forwarder_add",
                ("device", device.uuid),
                {"name": device.name, "app": app.id, "own_key": bool(own_key)},
            )
    except DomainError as error:
        attach_error(form, error)
        return render_app_page(app, form, http_status(error))
    if form.once.data:
        session[ADDED] = (session.get(ADDED, []) + [form.once.data])[-REMEMBERED:]
    # Rendered, not redirected: the key must not survive in a session or a URL.
    return render_template(
        "panel/devices_forwarder_steps.html",
        app=app,
        device=device,
        credentials=credentials,
        unreachable=unreachable_by_phone(credentials.url),
        registrations=sms_gateway_registrations(device, credentials.url)
        if app.id == SMS_GATEWAY
        else (),
        headers_json=sms_to_url_headers(credentials),
    )


def sms_gateway_registrations(device, url):
    """The commands that register the intake URL on SMS Gateway's local server, for texts and
    pings."""
    # The webhook ids name the forwarder: running a command again replaces its webhook, not adds.
    commands = []
    for event, suffix in (("sms:received", ""), ("system:ping", "-ping")):
        body = json.dumps({"id": f"gateway-{device.uuid[:8]}{suffix}", "url": url, "event": event})
        commands.append(
            "curl -X POST -u USERNAME:PASSWORD -H 'Content-Type: application/json' "
            f"-d {shlex.quote(body)} http://PHONE-ADDRESS:8080/webhooks"
        )
    return commands


def sms_to_url_headers(credentials):
    """What SMS to URL Forwarder's Headers box must hold: its User-agent and our secret header."""
    if not credentials.header_name:
        return None
    return json.dumps(
        {"User-agent": "SMS Forwarder App", credentials.header_name: credentials.header_value}
    )


@bp.get("/devices/<device_uuid>/status")
@requires(VIEW)
def device_status(device_uuid):
    """The "send a test text" check's answer: whether the phone was heard from, and what came."""
    return jsonify(first_contact(get_device(current_brand(), device_uuid)))


@bp.get("/devices/pairing/<int:code_id>/status")
@requires(VIEW)
def pairing_status(code_id):
    """The pairing page's check: the phone its code paired, once it has, as device_status says."""
    device = paired_with(current_brand(), code_id)
    if device is None:
        return jsonify(
            {"paired": False, "heard": False, "message": _("Waiting for the phone to pair…")}
        )
    return jsonify({"paired": True, **first_contact(device)})
