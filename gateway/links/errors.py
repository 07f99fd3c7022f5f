"""Why a payment link cannot take a payment now: disabled, expired or used up."""

from ..domain_errors import Gone


class LinkUnavailable(Gone):
    """The link exists but takes no more payments (LINK_UNAVAILABLE, shown as a 410 page)."""

    code = "LINK_UNAVAILABLE"

    def __init__(self, reason, message=None):
        super().__init__(message or REASONS[reason])
        self.reason = reason


REASONS = {
    "disabled": "This payment link has been turned off by the shop.",
    "expired": "This payment link has expired.",
    "used_up": "This payment link has reached its limit of payments.",
}
