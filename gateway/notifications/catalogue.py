"""What the merchant can be told about, through which channels, and what each event defaults to."""

from ..i18n import lazy_gettext as _l

EMAIL, TELEGRAM, APP = "email", "telegram", "app"
CHANNELS = (EMAIL, TELEGRAM, APP)
CHANNEL_LABELS = {EMAIL: _l("E-mail"), TELEGRAM: _l("Telegram"), APP: _l("Companion app")}

PAYMENT_COMPLETED = "payment.completed"
PAYMENT_REVIEW = "payment.review"
PHONE_OFFLINE = "phone.offline"
PHONE_ONLINE = "phone.online"
WEBHOOKS_FAILING = "webhooks.failing"
SMS_UNCLAIMED = "sms.unclaimed"
SMS_GAP = "sms.gap"
RATE_FEED_FAILING = "rates.feed_failing"
WALLET_UNAPPLIED = "wallets.unapplied_payment"
TEST = "test"
EVENTS = (
    PAYMENT_COMPLETED,
    PAYMENT_REVIEW,
    PHONE_OFFLINE,
    PHONE_ONLINE,
    WEBHOOKS_FAILING,
    SMS_UNCLAIMED,
    SMS_GAP,
    RATE_FEED_FAILING,
    WALLET_UNAPPLIED,
)
EVENT_LABELS = {
    PAYMENT_COMPLETED: _l("A payment completed"),
    PAYMENT_REVIEW: _l("A payment needs review"),
    PHONE_OFFLINE: _l("A phone went offline"),
    PHONE_ONLINE: _l("A phone is back online"),
    WEBHOOKS_FAILING: _l("Webhook deliveries are failing"),
    SMS_UNCLAIMED: _l("A payment SMS that no payment claimed"),
    SMS_GAP: _l("A phone missed a wallet text (the balance jumped)"),
    RATE_FEED_FAILING: _l("The exchange rate feed is failing (the last rates are kept)"),
    WALLET_UNAPPLIED: _l("Money paid through a wallet's API did not pay its payment"),
}
# A completed payment is routine (off unless chosen); the rest is what a merchant must act on.
DEFAULT_CHANNELS = {
    PAYMENT_COMPLETED: (),
    PAYMENT_REVIEW: (EMAIL, TELEGRAM),
    PHONE_OFFLINE: (EMAIL, TELEGRAM),
    PHONE_ONLINE: (EMAIL, TELEGRAM),
    WEBHOOKS_FAILING: (EMAIL, TELEGRAM),
    SMS_UNCLAIMED: (EMAIL, TELEGRAM, APP),
    SMS_GAP: (EMAIL, TELEGRAM, APP),
    RATE_FEED_FAILING: (EMAIL, TELEGRAM),
    WALLET_UNAPPLIED: (EMAIL, TELEGRAM),
}
# The phone already hears of a payment held for review from matching (sms/settling.py
# notify_review), and of its own silence it cannot be told: those app cells are not offered, so
# nothing reaches the phone twice.
NOT_OFFERED = {(PAYMENT_REVIEW, APP), (PHONE_OFFLINE, APP)}


def offered(event, channel):
    """Whether the grid offers this event × channel cell."""
    return (event, channel) not in NOT_OFFERED
