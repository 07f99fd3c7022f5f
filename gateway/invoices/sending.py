"""Sending an invoice to its customer by e-mail (with the PDF) and by SMS; the overdue reminder."""

import logging

from markupsafe import escape

from ..answer_commit import commit_work
from ..domain_errors import ValidationFailed
from ..mail.outbox import mail_configured, send_mail
from ..mail.settings import sendable_address
from ..sms.outbound import queue_sms
from .lifecycle import invoice_url, mark_sent
from .models.invoice import LANGUAGES
from .pdf import pdf_filename, render_invoice_pdf
from .texts import email_texts, in_language, sms_text

log = logging.getLogger(__name__)
CHANNELS = ("email", "sms")


def checked_channels(invoice, channels):
    """The channels to send by, each possible for this customer and brand; refusals name the
    field."""
    channels = tuple(dict.fromkeys(channels or CHANNELS))
    if not channels or not set(channels) <= set(CHANNELS):
        raise ValidationFailed.field("channels", "Choose email, sms or both.")
    customer = invoice.customer
    if "email" in channels:
        if not customer.email:
            raise ValidationFailed.field(
                "channels", "The customer has no e-mail address.", "no_email"
            )
        if not sendable_address(customer.email):
            raise ValidationFailed.field(
                "channels",
                "Mail cannot be sent to the customer's e-mail address: correct it on the "
                "customer, or send by SMS.",
                "unsendable_email",
            )
        if not mail_configured(invoice.brand_id):
            raise ValidationFailed.field(
                "channels",
                "E-mail is not set up: add SMTP settings under Settings → E-mail.",
                "mail_not_configured",
            )
    if "sms" in channels and not customer.phone:
        raise ValidationFailed.field("channels", "The customer has no phone number.", "no_phone")
    return channels


def send_invoice(invoice, channels=CHANNELS, language=None):
    """Send the invoice by the chosen channels in its language (or `language`); draft → sent.

    The e-mail and the SMS are queued in the same transaction as the status change: both go
    out after the commit, or neither does.
    """
    if language is not None and language not in LANGUAGES:
        raise ValidationFailed.field("language", "Choose en or bn.")
    channels = checked_channels(invoice, channels)
    mark_sent(invoice)
    dispatch(invoice, channels, language or invoice.language)
    commit_work()
    return invoice


def send_reminder(invoice):
    """The one reminder of an overdue invoice, by every channel the customer and brand allow."""
    channels = []
    if invoice.customer.email and mail_configured(invoice.brand_id):
        if sendable_address(invoice.customer.email):
            channels.append("email")
        else:  # the address stays out of the log: it is the customer's
            log.warning("invoice %s: its customer's e-mail address cannot take mail", invoice.id)
    if invoice.customer.phone:
        channels.append("sms")
    if not channels:
        log.warning("invoice %s is overdue but its customer cannot be reached", invoice.id)
        return ()
    dispatch(invoice, channels, invoice.language, reminder=True)
    return tuple(channels)


def dispatch(invoice, channels, language, reminder=False):
    """Queue the e-mail (PDF attached) and/or the SMS in the current transaction."""
    link = invoice_url(invoice) + ("?lang=bn" if language == "bn" else "")
    with in_language(language):
        if "email" in channels:
            subject, text = email_texts(invoice, link, reminder=reminder)
            anchor = f'<a href="{escape(link)}">{escape(link)}</a>'
            html = "<br>\n".join(
                str(escape(line)).replace(str(escape(link)), anchor) for line in text.split("\n")
            )
            pdf = render_invoice_pdf(invoice, language)
            send_mail(
                invoice.brand_id,
                invoice.customer.email,
                subject,
                text,
                html=f"<div>{html}</div>",
                attachments=[(pdf_filename(invoice), "application/pdf", pdf)],
            )
        if "sms" in channels:
            queue_sms(
                invoice.brand,
                invoice.customer.phone,
                sms_text(invoice, link, reminder),
                livemode=invoice.livemode,
            )
