"""Where webhooks may go: callback URLs whose host is private, or resolves to private addresses,
are refused unless allowed (the rule is gateway/destinations.py, shared with SMTP servers)."""

from urllib.parse import urlsplit

from ..destinations import PRIVATE_ADDRESS, PRIVATE_NAME, UNRESOLVED, checked_host
from ..domain_errors import field_error

REFUSALS = {
    PRIVATE_NAME: "The callback URL points to a private address.",
    PRIVATE_ADDRESS: "The callback URL resolves to a private, loopback or link-local address.",
    UNRESOLVED: "The callback URL's host does not resolve.",
}


def checked_destination(url, strict=True):
    """(why `url` may not receive webhooks here, or None; the checked addresses to connect to, or
    None).

    The addresses are None when private callbacks are allowed (destinations.py:checked_host).
    `strict` (at delivery) also refuses a host that does not resolve; at creation such a host is let
    through, since its DNS may not exist yet and every delivery checks again. A host private by its
    form (localhost., metadata.google.internal, 127.0.0.1.nip.io) is refused at both, without DNS.
    """
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return (REFUSALS[UNRESOLVED] if strict else None), None
    refusal, addresses = checked_host(parts.hostname or "", port, strict)
    return (REFUSALS[refusal] if refusal else None), addresses


def check_callback_url(url, field="callback_url"):
    """Raise ValidationFailed on `field` when the URL may not receive webhooks; None and '' pass."""
    if not url:
        return
    reason, _ = checked_destination(url, strict=False)
    if reason is not None:
        raise field_error(field, reason, code="private_address")
