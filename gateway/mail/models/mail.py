"""A brand's SMTP settings, and the outbox of e-mails with their attachments."""

from ...clock import utcnow
from ...db_types import UTCDateTime
from ...extensions import db
from ...outbox.columns import OutboxColumns

SECURITY_CHOICES = ("none", "starttls", "tls")


class MailSettings(db.Model):
    __tablename__ = "mail_settings"

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False, unique=True)
    host = db.Column(db.String(255), nullable=False)
    port = db.Column(db.Integer, nullable=False, default=587)
    security = db.Column(db.String(10), nullable=False, default="starttls")
    username = db.Column(db.String(255))
    # AES-GCM under a key derived from SECRET_KEY (gateway/mail/settings.py): never shown back.
    password_sealed = db.Column(db.Text)
    from_address = db.Column(db.String(254), nullable=False)
    from_name = db.Column(db.String(120))
    updated_at = db.Column(UTCDateTime, nullable=False, default=utcnow, onupdate=utcnow)


class OutboundMail(OutboxColumns, db.Model):
    __tablename__ = "outbound_mail"
    __table_args__ = (
        db.Index("ix_outbound_mail_status_next", "status", "next_attempt_at"),
        db.Index("ix_outbound_mail_brand_created", "brand_id", "created_at"),
    )

    id = db.Column(db.Integer, primary_key=True)
    brand_id = db.Column(db.Integer, db.ForeignKey("brands.id"), nullable=False)
    to_address = db.Column(db.String(254), nullable=False)
    subject = db.Column(db.String(255), nullable=False)
    text_body = db.Column(db.Text, nullable=False)
    html_body = db.Column(db.Text)

    attachments = db.relationship(
        "MailAttachment", order_by="MailAttachment.id", cascade="all, delete-orphan"
    )

    PENDING_WORDS = ("queued", "sending")  # the panel's


class MailAttachment(db.Model):
    __tablename__ = "mail_attachments"

    id = db.Column(db.Integer, primary_key=True)
    mail_id = db.Column(
        db.Integer,
        db.ForeignKey("outbound_mail.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )
    filename = db.Column(db.String(255), nullable=False)
    content_type = db.Column(db.String(100), nullable=False)
    content = db.Column(db.LargeBinary, nullable=False)
