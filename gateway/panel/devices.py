"""Devices: the brand's companion phones with their last heartbeat; pair a new one, revoke one.

Pairing is for super-administrators, since a paired phone's texts complete payments; anyone may
revoke a phone (a lost phone should not wait for the owner).
"""
from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from markupsafe import Markup

from ..clock import utcnow
from ..errors import ApiError
from ..services.brand_devices import get_device, list_devices, revoke_paired_device, seconds_left, start_pairing
from ..services.pairing import pairing_qr_svg, server_url
from . import bp
from .access import current_brand, staff_required, super_admin_required
from .audit import record_audit
from .dashboard import phone_state
from .forms import ActionForm


@bp.get("/devices")
@staff_required
def devices():
    """Paired phones, newest first, with how recently each checked in; revoked ones below."""
    active, revoked = list_devices(current_brand())
    now = utcnow()
    return render_template("panel/devices.html", active=active, revoked=revoked,
                           states={device.id: phone_state(device.last_heartbeat_at, now) for device in active})


@bp.post("/devices/pairing")
@super_admin_required
def device_pairing():
    """A fresh 6-digit code and its QR; rendered, not redirected, so the code lives in no URL or session."""
    if not ActionForm().validate_on_submit():
        return redirect(url_for("panel.devices"))
    brand = current_brand()
    code, expires_at = start_pairing(brand)
    record_audit(current_user, "device.pairing_code", None, {"expires_at": expires_at.isoformat()})
    return render_template("panel/devices_pair.html", code=code, qr=Markup(pairing_qr_svg(code, brand)),
                           expires_at=expires_at, seconds=seconds_left(expires_at), server_url=server_url(brand))


@bp.post("/devices/<device_uuid>/revoke")
@staff_required
def device_revoke(device_uuid):
    """Unpair a phone: its next request is refused, and it forwards nothing more."""
    device = get_device(current_brand(), device_uuid)
    if ActionForm().validate_on_submit():
        if not device.active:
            flash(_("%(name)s was already revoked.", name=device.name), "info")
            return redirect(url_for("panel.devices"))
        try:
            revoke_paired_device(device, current_user)
        except ApiError as error:
            flash(error.message, "error")
        else:
            record_audit(current_user, "device.revoke", ("device", device.uuid),
                         {"name": device.name, "device_id": device.device_id})
            flash(_("%(name)s is revoked; it can no longer forward texts.", name=device.name), "success")
    return redirect(url_for("panel.devices"))
