"""The merchant's view of its phones: list them, pair a new one with a code, revoke one."""

from ..clock import utcnow
from ..domain_errors import not_found
from ..extensions import db
from .models.device import SIMULATOR_PLATFORM, Device, PairingCode
from .pairing import code_hash, create_pairing_code
from .tokens import revoke_device

REVOKED_SHOWN = 20


def not_simulator():
    """The clause that leaves out the gateway's simulator device (a NULL platform is a phone)."""
    return Device.platform.is_distinct_from(SIMULATOR_PLATFORM)


def phones():
    """The WHERE clauses of the phones of every brand: paired, not revoked, never the simulator."""
    return (Device.revoked_at.is_(None), not_simulator())


def brand_phones(brand_id):
    """The WHERE clauses of one brand's phones (see phones())."""
    return (Device.brand_id == brand_id, *phones())


def is_simulator(device_uuid):
    """Whether a device uuid names the gateway's simulator, which is no phone and sends nothing."""
    found = db.select(Device.id).where(
        Device.uuid == str(device_uuid)[:36], Device.platform == SIMULATOR_PLATFORM
    )
    return db.session.execute(found).first() is not None


def list_devices(brand):
    """The brand's paired phones, newest first, then the last few revoked ones for the record."""
    base = (
        db.select(Device)
        .where(Device.brand_id == brand.id, not_simulator())
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
    """A phone of this brand by its uuid; NotFound otherwise (another brand's, the simulator)."""
    device = db.session.execute(
        db.select(Device).where(
            Device.uuid == str(device_uuid)[:36], Device.brand_id == brand.id, not_simulator()
        )
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
