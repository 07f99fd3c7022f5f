"""What the panel says a phone has sent lately: its last text per device, and the "test text"
check's answer.
"""

from flask_babel import gettext as _

from ..devices.models.device import Device, PairingCode
from ..devices.pairing import code_hash
from ..domain_errors import not_found
from ..extensions import db
from ..sms.models.inbound_sms import InboundSms
from .formatting import local_datetime

SNIPPET = 80  # characters of a text shown beside its phone


def last_texts(devices):
    """The newest stored text of each device, by device id (one query for the whole list)."""
    ids = [device.id for device in devices]
    if not ids:
        return {}
    newest = (
        db.select(db.func.max(InboundSms.id))
        .where(InboundSms.device_id.in_(ids))
        .group_by(InboundSms.device_id)
    )
    texts = db.session.execute(db.select(InboundSms).where(InboundSms.id.in_(newest))).scalars()
    return {text.device_id: text for text in texts}


def snippet(body):
    """The start of a text, on one line."""
    line = " ".join((body or "").split())
    return line if len(line) <= SNIPPET else line[: SNIPPET - 1] + "…"


def first_contact(device):
    """Whether the phone was heard from since it was added, and a sentence saying so."""
    # The sentence is plain text, set as text by the page: a sender id or a text is whatever the
    # phone sent, and JSON escapes nothing for HTML.
    text = last_texts([device]).get(device.id)
    heard = bool(device.last_sms_at or device.last_heartbeat_at)
    if not device.active:
        message = _("This phone is revoked: it forwards nothing more.")
    elif device.last_sms_at:
        message = _("A text arrived at %(when)s.", when=local_datetime(device.last_sms_at))
        if text is not None:
            message += " " + _(
                "From %(sender)s: “%(text)s”", sender=text.sender, text=snippet(text.body)
            )
    elif device.last_heartbeat_at:
        message = _(
            "The phone checked in at %(when)s. Now send it a test text.",
            when=local_datetime(device.last_heartbeat_at),
        )
    else:
        message = _("Waiting for the phone's first heartbeat or text…")
    return {
        "device": device.uuid,
        "heard": heard,
        "revoked": not device.active,
        "last_heartbeat_at": iso(device.last_heartbeat_at),
        "last_sms_at": iso(device.last_sms_at),
        "message": message,
    }


def iso(moment):
    """A moment as ISO 8601 in UTC, or None."""
    return moment.isoformat() if moment else None


def pairing_code_id(brand, code):
    """The row id of a code just made: the pairing page's check asks by it (never by the code)."""
    return db.session.execute(
        db.select(PairingCode.id)
        .where(PairingCode.brand_id == brand.id, PairingCode.code_hash == code_hash(code))
        .order_by(PairingCode.id.desc())
        .limit(1)
    ).scalar_one()


def paired_with(brand, code_id):
    """The phone a brand's pairing code paired, None while unused; NotFound for another brand's."""
    row = db.session.execute(
        db.select(PairingCode.brand_id, PairingCode.device_id).where(PairingCode.id == code_id)
    ).first()
    if row is None or row.brand_id != brand.id:
        raise not_found("pairing_code")
    return db.session.get(Device, row.device_id) if row.device_id else None
