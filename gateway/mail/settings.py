"""A brand's SMTP settings: read, validated and saved, the password sealed under SECRET_KEY."""

from email_validator import EmailNotValidError, validate_email

from ..answer_commit import commit_work
from ..domain_errors import ValidationFailed
from ..extensions import db
from ..sealing import InvalidTag, seal, unseal
from .models.mail import SECURITY_CHOICES, MailSettings
from .smtp_client import smtp_host_refusal

PURPOSE = "smtp-password-at-rest"
DEFAULT_PORTS = {"none": 25, "starttls": 587, "tls": 465}


def seal_password(password, brand_id):
    """The SMTP password encrypted at rest, bound to its brand so sealed values cannot be
    swapped."""
    return seal(password.encode(), PURPOSE, str(brand_id))


def open_password(sealed, brand_id):
    """The SMTP password, unsealed with SECRET_KEY or a fallback; ValueError when none opens it."""
    try:
        return unseal(sealed, PURPOSE, str(brand_id))[0].decode()
    except InvalidTag as error:
        raise ValueError(
            "The stored SMTP password was sealed under a secret key no longer in use."
        ) from error


def get_mail_settings(brand_id):
    """The brand's SMTP settings, or None before they are saved."""
    return db.session.execute(
        db.select(MailSettings).where(MailSettings.brand_id == brand_id)
    ).scalar_one_or_none()


def normalise_address(value, field="from_address"):
    """A valid e-mail address in normal form, or ValidationFailed naming `field`."""
    try:
        return validate_email(value or "", check_deliverability=False).normalized
    except EmailNotValidError as error:
        raise ValidationFailed.field(field, f"Not a valid e-mail address: {error}") from error


def sendable_address(value):
    """`value` in the normal form send_mail takes it as a recipient, or None when send_mail would
    refuse it (the customers API accepts some it refuses, e.g. on a .test or .local domain)."""
    try:
        return normalise_address(value, field="to")
    except ValidationFailed:
        return None


def checked_values(data):
    """The settings from a form, validated: host (a public server, where private ones are not
    allowed), port, security and from address."""
    host = (data.get("host") or "").strip()
    if not host or len(host) > 255 or any(c.isspace() for c in host):
        raise ValidationFailed.field("host", "Enter the SMTP server's host name.")
    security = data.get("security") or "starttls"
    if security not in SECURITY_CHOICES:
        raise ValidationFailed.field("security", "Choose none, STARTTLS or TLS.")
    port = data.get("port") or DEFAULT_PORTS[security]
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValidationFailed.field("port", "The port is a number from 1 to 65535.")
    refusal = smtp_host_refusal(host, port, strict=False)  # each connection checks again
    if refusal is not None:
        raise ValidationFailed.field("host", refusal)
    return {
        "host": host,
        "port": port,
        "security": security,
        "username": (data.get("username") or "").strip() or None,
        "from_address": normalise_address(data.get("from_address")),
        "from_name": (data.get("from_name") or "").strip()[:120] or None,
    }


def save_mail_settings(brand, data):
    """Create or update the brand's SMTP settings; a blank password keeps the stored one.

    `clear_password` removes it. Returns the names of the fields that changed (the password by
    name only: its value never leaves this module).
    """
    values = checked_values(data)
    settings = get_mail_settings(brand.id)
    if settings is None:
        settings = MailSettings(brand_id=brand.id)
        db.session.add(settings)
    changed = [name for name, value in values.items() if getattr(settings, name) != value]
    for name, value in values.items():
        setattr(settings, name, value)
    if data.get("password"):
        settings.password_sealed = seal_password(data["password"], brand.id)
        changed.append("password")
    elif data.get("clear_password") and settings.password_sealed:
        settings.password_sealed = None
        changed.append("password")
    commit_work()
    return changed
