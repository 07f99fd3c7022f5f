"""Devices: the brand's phones (paired companion apps and forwarders) with their app, last
heartbeat and last text; pair a new one, revoke one.

Pairing or adding a phone is for owners and admins, since a phone's texts complete payments;
staff may revoke a phone too (a lost phone should not wait for the owner). "Add a phone" is
add_phone.py.
"""

import ipaddress
from datetime import timedelta
from urllib.parse import urlsplit

from flask import current_app, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from markupsafe import Markup

from ..answer_commit import unit_of_work
from ..clock import utcnow
from ..devices.brand_devices import (
    get_device,
    list_devices,
    revoke_paired_device,
    seconds_left,
    start_pairing,
)
from ..devices.pairing import pairing_qr_svg, server_url
from ..domain_errors import DomainError
from ..notifications.settings import settings_for
from . import bp
from .access import DEVICES_PAIR, DEVICES_REVOKE, VIEW, current_brand, requires
from .audit import record_audit
from .dashboard import phone_state
from .device_activity import last_texts, pairing_code_id, snippet
from .forms import ActionForm
from .phone_apps import app_name


@bp.get("/devices")
@requires(VIEW)
def devices():
    """Phones, newest first, with their app, how recently each checked in and its last text;
    revoked ones below.
    """
    brand = current_brand()
    active, revoked = list_devices(brand)
    now, minutes = utcnow(), settings_for(brand.id).offline_minutes
    return render_template(
        "panel/devices.html",
        active=active,
        revoked=revoked,
        offline_minutes=minutes,
        texts=last_texts(active),
        snippet=snippet,
        app_name=app_name,
        states={
            device.id: phone_state(device.last_heartbeat_at, now, timedelta(minutes=minutes))
            for device in active
        },
    )


def unreachable_by_phone(url):
    """Whether no phone can reach a URL: it names this computer only (localhost, 127.x, ::1),
    0.0.0.0, or no host.
    """
    host = (urlsplit(url).hostname or "").lower()
    if not host or host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def companion_app_url():
    """The configured download address of the companion app, when it is an http(s) URL."""
    url = current_app.config.get("COMPANION_APP_URL") or ""
    return url if urlsplit(url).scheme in ("http", "https") else None


@bp.get("/devices/pairing")
@requires(VIEW)
def device_pairing_reopened():
    """A reloaded or bookmarked pairing page: codes are shown once, so back to Devices to make a new
    one.
    """
    if current_user.is_super_admin:
        flash(_("A pairing code is shown only once. Press “Add a phone” for a new one."), "info")
    else:
        flash(
            _("A pairing code is shown only once; a super-administrator makes a new one."), "info"
        )
    return redirect(url_for("panel.devices"))


@bp.post("/devices/pairing")
@requires(DEVICES_PAIR)
def device_pairing():
    """A fresh 6-digit code and its QR; rendered, not redirected, so the code lives in no URL or
    session.
    """
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.devices"))
    brand = current_brand()
    with unit_of_work():
        code, expires_at = start_pairing(brand)
        record_audit(
            current_user, "device.pairing_code", None, {"expires_at": expires_at.isoformat()}
        )
    address = server_url(brand)
    return render_template(
        "panel/devices_pair.html",
        code=code,
        code_id=pairing_code_id(brand, code),
        qr=Markup(pairing_qr_svg(code, brand)),
        expires_at=expires_at,
        seconds=seconds_left(expires_at),
        server_url=address,
        unreachable=unreachable_by_phone(address),
        app_url=companion_app_url(),
        brand_has_own_url=bool(brand.base_url),
    )


@bp.post("/devices/<device_uuid>/revoke")
@requires(DEVICES_REVOKE)
def device_revoke(device_uuid):
    """Unpair a phone: its next request is refused, and it forwards nothing more."""
    device = get_device(current_brand(), device_uuid)
    if ActionForm().validate_on_submit():
        if not device.active:
            flash(_("%(name)s was already revoked.", name=device.name), "info")
            return redirect(url_for("panel.devices"))
        try:
            with unit_of_work():
                revoke_paired_device(device, current_user)
                record_audit(
                    current_user,
                    "device.revoke",
                    ("device", device.uuid),
                    {"name": device.name, "device_id": device.device_id},
                )
        except DomainError as error:
            flash(error.message, "error")
        else:
            flash(
                _("%(name)s is revoked; it can no longer forward texts.", name=device.name),
                "success",
            )
    return redirect(url_for("panel.devices"))
