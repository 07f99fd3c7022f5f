"""The merchant's view of its phones: list them, pair a new one with a code, revoke one."""

from ..clock import utcnow
from ..domain_errors import not_found
from ..extensions import db
from .models.device import Device, PairingCode
from .pairing import code_hash, create_pairing_code
from .tokens import revoke_device

REVOKED_SHOWN = 20


def list_devices(brand):
    """The brand's paired phones, newest first, then the last few revoked ones for the record."""
    base = (
        db.select(Device)
        .where(Device.brand_id == brand.id)
        .order_by(Device.created_at.desc(), Device.id.desc())
    )
    active = db.session.execute(base.where(Device.revoked_at.is_(None))).scalars().all()
    revoked = (
        db.session.execute(base.where(Device.revoked_at.is_not(None)).limit(REVOKED_SHOWN))
        .scalars()
        .all()
    )
    return active, revoked


def get_device(brand, device_uuid):
    """A device of this brand by its uuid; NotFound for anything else, another brand's included."""
    device = db.session.execute(
        db.select(Device).where(Device.uuid == str(device_uuid)[:36], Device.brand_id == brand.id)
    ).scalar_one_or_none()
    if device is None:
        raise not_found("device")
    return device


def start_pairing(brand):
    """A new one-time code and when it expires: (code, expires_at)."""
    code = create_pairing_code(brand)
    expires_at = db.session.execute(
        db.select(PairingCode.expires_at)
        .where(PairingCode.brand_id == brand.id, PairingCode.code_hash == code_hash(code))
        .order_by(PairingCode.id.desc())
        .limit(1)
    ).scalar_one()
    return code, expires_at


def seconds_left(expires_at):
    """Whole seconds until a moment, never below zero."""
    return max(0, int((expires_at - utcnow()).total_seconds()))


def revoke_paired_device(device, user):
    """Unpair a phone from the panel: its tokens stop working on its next request."""
    revoke_device(device, f"revoked in the panel by {user.email}"[:100])
    return device
