"""Where webhooks may go: callback URLs resolving to private addresses are refused unless allowed."""

import ipaddress
import socket
from urllib.parse import urlsplit

from flask import current_app

from ..domain_errors import field_error


def private_callbacks_allowed():
    """Whether this deployment may post webhooks to private, loopback or link-local addresses."""
    return bool(current_app.config.get("ALLOW_PRIVATE_CALLBACKS"))


def is_public_address(address):
    """Whether an IP address is globally routable (an IPv4-mapped IPv6 address is judged as IPv4)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    # is_global is False for private, loopback, link-local, shared (100.64/10), reserved and multicast.
    return ip.is_global and not ip.is_multicast


def resolve(host, port):
    """Every address a host name resolves to, in the resolver's order of preference; an IP literal is itself."""
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(info[4][0] for info in infos))


def checked_destination(url, strict=True):
    """(why `url` may not receive webhooks here, or None; the checked addresses to connect to, or None).

    The addresses are None when private callbacks are allowed: the connection may then resolve the name
    itself. Otherwise the sender must connect to one of exactly these, in the resolver's order, since
    resolving the name again may give another answer (DNS rebinding). `strict` (at delivery) also
    refuses a host that does not resolve; at creation such a host is let through, since its DNS may
    not exist yet and every delivery checks again.
    """
    if private_callbacks_allowed():
        return None, None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host or host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return "The callback URL points to a private address.", None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = resolve(host, port)
    except (OSError, ValueError, UnicodeError):
        return ("The callback URL's host does not resolve." if strict else None), None
    if not addresses or not all(is_public_address(address) for address in addresses):
        return "The callback URL resolves to a private, loopback or link-local address.", None
    return None, addresses


def check_callback_url(url, field="callback_url"):
    """Raise ValidationFailed on `field` when the URL may not receive webhooks; None and '' pass."""
    if not url:
        return
    reason, _ = checked_destination(url, strict=False)
    if reason is not None:
        raise field_error(field, reason, code="private_address")
