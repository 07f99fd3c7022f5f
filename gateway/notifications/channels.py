"""The channels a notification goes out through: Telegram's Bot API, e-mail, and the companion app's
feed.
"""

import logging
import re

import requests
from flask import current_app

from ..devices.notifications import notify_devices
from ..mail.outbox import mail_configured, send_mail
from .settings import recipients, sendable_recipients, telegram_token

log = logging.getLogger(__name__)

TELEGRAM_LIMIT = 4096  # characters in one sendMessage text
TIMEOUT = (5, 10)  # connect, read


BOT_PATH = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")


class HideBotTokens(logging.Filter):
    """urllib3 logs each request line at DEBUG, and a Bot API path holds the token: mask it."""

    def filter(self, record):
        message = record.getMessage()
        if BOT_PATH.search(message):
            record.msg, record.args = BOT_PATH.sub("/bot…", message), ()
        return True


logging.getLogger("urllib3.connectionpool").addFilter(HideBotTokens())


class ChannelError(Exception):
    """A send that did not go through; the message is shown in the panel, so it never holds a
    secret.

    `retry_after` (seconds) is the receiver's own "not before" (Telegram's 429 answer).
    """

    def __init__(self, message, retry_after=None):
        super().__init__(message)
        self.retry_after = retry_after


def message_text(note):
    """Subject, text and link as one plain message."""
    parts = [note.subject, note.text]
    if note.link:
        parts.append(note.link)
    return "\n\n".join(part for part in parts if part)


def send_telegram(settings, note):
    """POST sendMessage to the Bot API (TELEGRAM_API_BASE); ChannelError unless it answers ok."""
    token, chat_id = telegram_token(settings), settings.telegram_chat_id
    if not token or not chat_id:
        raise ChannelError("Telegram is not set up: add the bot token and chat id.")
    base = current_app.config.get("TELEGRAM_API_BASE") or "https://api.telegram.org"
    try:
        answer = requests.post(
            f"{base.rstrip('/')}/bot{token}/sendMessage",
            json={
                "chat_id": chat_id,
                "text": message_text(note)[:TELEGRAM_LIMIT],
                "disable_web_page_preview": True,
            },
            timeout=TIMEOUT,
            allow_redirects=False,
        )
    except requests.RequestException as error:
        # Not str(error): it names the URL, and the URL holds the bot token.
        raise ChannelError(f"Telegram could not be reached ({type(error).__name__}).") from None
    try:
        body = answer.json()
    except ValueError:
        body = {}
    if answer.status_code != 200 or not isinstance(body, dict) or body.get("ok") is not True:
        body = body if isinstance(body, dict) else {}
        description = str(body.get("description") or "")
        wait = (body.get("parameters") or {}).get("retry_after")
        raise ChannelError(
            f"Telegram answered {answer.status_code}: {description.replace(token, '…')[:300]}",
            retry_after=wait if isinstance(wait, int) and 0 < wait <= 86400 else None,
        )


def send_app(settings, note):
    """The companion app's own notifications feed (gateway/devices/notifications.py), every
    phone."""
    body = "\n\n".join(part for part in (note.text, note.link) if part)
    notify_devices(note.brand_id, note.event, note.subject, body=body)


def send_email(settings, note):
    """One e-mail per recipient through the brand's SMTP outbox (gateway/mail), which retries on its
    own.

    Every recipient is checked before any e-mail is queued, so that a failed attempt leaves no
    copies behind to be sent again with the next one. A recipient the outbox refuses (saved before
    the settings checked addresses as it does) is skipped and counted in the log, never named.
    """
    if not recipients(settings):
        raise ChannelError("No e-mail recipient is set.")
    if not mail_configured(note.brand_id):
        raise ChannelError("E-mail is not set up: add the SMTP server in Settings → E-mail.")
    addresses, refused = sendable_recipients(settings)
    if not addresses:
        raise ChannelError(
            "No e-mail recipient is a valid address: correct them on the Notifications page."
        )
    if refused:
        log.warning(
            "notification %s: %s e-mail recipient(s) skipped, not valid addresses",
            note.id,
            refused,
        )
    body = "\n\n".join(part for part in (note.text, note.link) if part)
    for address in addresses:
        send_mail(note.brand_id, address, note.subject, body)


SENDERS = {"email": send_email, "telegram": send_telegram, "app": send_app}
