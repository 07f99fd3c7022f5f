"""Sending e-mail: one outbox job per message over smtplib, retried on the schedule below."""

import smtplib
from email.message import EmailMessage
from email.utils import formataddr, make_msgid

from ..outbox.attempts import make_attempt
from .models.mail import OutboundMail
from .outbox import OUTBOX
from .settings import get_mail_settings, open_password
from .smtp_client import MailNotSent, in_our_words, open_session


def deliver_mail(mail_id):
    """Send one queued, due e-mail if this process wins its lease; returns the status it leaves."""
    return make_attempt(OUTBOX, OutboundMail, mail_id, attempt)


def attempt(mail):
    """Hand the message over; None when it went, else why not."""
    try:
        transmit(mail)
    except MailNotSent as failure:
        return failure
    return None


def build_message(mail, settings):
    """The MIME message: plain text, an HTML alternative when given, then the attachments."""
    message = EmailMessage()
    message["From"] = formataddr((settings.from_name or "", settings.from_address))
    message["To"] = mail.to_address
    message["Subject"] = mail.subject
    message["Message-ID"] = make_msgid(domain=settings.from_address.rpartition("@")[2])
    message.set_content(mail.text_body)
    if mail.html_body:
        message.add_alternative(mail.html_body, subtype="html")
    for attachment in mail.attachments:
        maintype, _, subtype = attachment.content_type.partition("/")
        message.add_attachment(
            attachment.content,
            maintype=maintype,
            subtype=subtype or "octet-stream",
            filename=attachment.filename,
        )
    return message


def transmit(mail):
    """Hand the message to the brand's SMTP server; MailNotSent with the reason (never a secret)."""
    settings = get_mail_settings(mail.brand_id)
    if settings is None:
        raise MailNotSent("E-mail is not set up for this brand (Settings → E-mail).")
    smtp_send(settings, build_message(mail, settings))


def smtp_send(settings, message):
    """One SMTP session with the settings' security and login; MailNotSent on any failure, said in
    our words (the server's own reply goes to the log only).
    """
    password = None
    if settings.password_sealed:
        try:
            password = open_password(settings.password_sealed, settings.brand_id)
        except ValueError as error:
            raise MailNotSent(str(error)) from error
    try:
        with open_session(settings, password) as client:
            refused = client.send_message(message)
    except (smtplib.SMTPException, OSError) as error:
        raise MailNotSent(in_our_words(error, settings)) from error
    if refused:
        raise MailNotSent(f"The SMTP server refused the recipient(s): {', '.join(refused)}")


def send_test_mail(settings, to):
    """Send a test e-mail now, in the request (the settings page shows the answer); MailNotSent if
    not.
    """
    message = EmailMessage()
    message["From"] = formataddr((settings.from_name or "", settings.from_address))
    message["To"] = to
    message["Subject"] = "Test e-mail from your payment gateway"
    message.set_content(
        "Your SMTP settings work: this message went through "
        f"{settings.host}:{settings.port} ({settings.security})."
    )
    smtp_send(settings, message)
