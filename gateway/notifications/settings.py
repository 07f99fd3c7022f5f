"""A brand's notification settings: channels per event, recipients, the Telegram bot, the
thresholds.
"""

import re

from ..clock import utcnow
from ..domain_errors import ValidationFailed, field_error
from ..extensions import db, rows_by
from ..mail.settings import normalise_address, sendable_address
from ..sealing import InvalidTag, seal, unseal
from .catalogue import CHANNELS, DEFAULT_CHANNELS, EVENTS, offered
from .models.notification import NotificationSettings

TOKEN_PURPOSE = "telegram-bot-token"
BOT_TOKEN = re.compile(r"^\d{3,20}:[A-Za-z0-9_-]{20,100}$")
CHAT_ID = re.compile(r"^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,62})$")
MINUTES = {"offline_minutes": (2, 24 * 60), "waiting_minutes": (5, 24 * 60)}
MINUTES["unclaimed_minutes"] = (5, 7 * 24 * 60)


def settings_for(brand_id):
    """The brand's stored settings, or an unsaved row with the defaults."""
    found = db.session.get(NotificationSettings, brand_id)
    return default_settings(brand_id) if found is None else found


def settings_of(brand_ids):
    """settings_for of several brands in one query: {brand_id: stored settings or the defaults}."""
    ids = set(brand_ids)
    found = rows_by(NotificationSettings.brand_id, ids)
    return {brand_id: found.get(brand_id) or default_settings(brand_id) for brand_id in ids}


def default_settings(brand_id):
    """An unsaved settings row with the defaults, for a brand that never saved its own."""
    return NotificationSettings(
        brand_id=brand_id,
        channels={},
        offline_minutes=15,
        waiting_minutes=30,
        unclaimed_minutes=60,
        notify_back_online=True,
    )


def chosen_channels(settings, event):
    """The channels the merchant chose for an event (its defaults until they choose)."""
    stored = (settings.channels or {}).get(event)
    picked = DEFAULT_CHANNELS.get(event, ()) if stored is None else stored
    return [channel for channel in CHANNELS if channel in picked and offered(event, channel)]


def split_addresses(value):
    """The addresses of a comma-, semicolon- or space-separated list, as written."""
    return [a.strip() for a in re.split(r"[,;\s]+", value or "") if a.strip()]


def recipients(settings):
    """The e-mail addresses notifications go to, as stored."""
    return split_addresses(settings.email_to)


def sendable_recipients(settings):
    """The stored recipients the mail outbox accepts, normalised, and how many it would refuse.

    Recipients saved before they were checked as the mail outbox checks them may be refused
    there; they are counted, never named, so that the caller can skip them without logging an
    address.
    """
    stored = recipients(settings)
    good = [address for address in map(sendable_address, stored) if address]
    return list(dict.fromkeys(good)), len(stored) - len(good)


def seal_token(token):
    """A bot token encrypted at rest under a key derived from SECRET_KEY."""
    return seal(token.encode(), TOKEN_PURPOSE, "telegram")


def telegram_token(settings):
    """The bot token in clear, None when unset or sealed under a key no longer in use."""
    if not settings.telegram_token_sealed:
        return None
    try:
        return unseal(settings.telegram_token_sealed, TOKEN_PURPOSE, "telegram")[0].decode()
    except InvalidTag:
        return None


def telegram_ready(settings):
    """Whether a bot token and a chat id are both set."""
    return bool(settings.telegram_token_sealed and settings.telegram_chat_id)


def checked_minutes(name, value):
    """A whole number of minutes within the setting's range, else ValidationFailed naming it."""
    low, high = MINUTES[name]
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        number = None
    if number is None or not low <= number <= high:
        raise field_error(name, f"Enter a whole number of minutes from {low} to {high}.")
    return number


def checked_emails(value):
    """Comma-separated addresses, each checked as the mail outbox checks them and stored in its
    normal form; blank means no e-mail."""
    addresses = []
    for address in split_addresses(value):
        try:
            addresses.append(normalise_address(address, field="email_to"))
        except ValidationFailed as error:
            raise field_error("email_to", f"{address}: {error.message}") from error
    joined = ", ".join(dict.fromkeys(addresses))
    if len(joined) > 500:
        raise field_error("email_to", "Name fewer recipients (500 characters at most).")
    return joined or None


def update_settings(brand_id, changes):
    """Apply validated changes (all or nothing, the caller commits); returns the names that changed.

    `changes` may hold: channels ({event: [channel]}), email_to, telegram_token (blank keeps the
    stored one), telegram_chat_id, clear_telegram, offline_minutes, waiting_minutes,
    unclaimed_minutes, notify_back_online.
    """
    settings = settings_for(brand_id)
    values = {}
    if "channels" in changes:
        values["channels"] = {
            event: [
                c for c in CHANNELS if c in changes["channels"].get(event, ()) and offered(event, c)
            ]
            for event in EVENTS
        }
    if "email_to" in changes:
        values["email_to"] = checked_emails(changes["email_to"])
    for name in MINUTES:
        if name in changes:
            values[name] = checked_minutes(name, changes[name])
    if "notify_back_online" in changes:
        values["notify_back_online"] = bool(changes["notify_back_online"])
    if "telegram_chat_id" in changes:
        chat = (changes["telegram_chat_id"] or "").strip()
        if chat and not CHAT_ID.match(chat):
            raise field_error("telegram_chat_id", "A chat id is a number (or @channelname).")
        values["telegram_chat_id"] = chat or None
    token = (changes.get("telegram_token") or "").strip()
    if token:
        if not BOT_TOKEN.match(token):
            raise field_error(
                "telegram_token", "A bot token looks like 123456789:AA… from @BotFather."
            )
        values["telegram_token_sealed"] = seal_token(token)
    if changes.get("clear_telegram"):
        values["telegram_token_sealed"] = values["telegram_chat_id"] = None
    changed = []
    for name, value in values.items():
        if getattr(settings, name) != value:
            changed.append("telegram_token" if name == "telegram_token_sealed" else name)
            setattr(settings, name, value)
    if changed:
        settings.updated_at = utcnow()
        db.session.add(settings)
    return changed
