"""Where webhooks may go: callback URLs resolving to private addresses are refused unless
allowed."""

import ipaddress
import socket
from urllib.parse import urlsplit

from flask import current_app

from ..domain_errors import field_error


def private_callbacks_allowed():
    """Whether this deployment may post webhooks to private, loopback or link-local addresses."""
    return bool(current_app.config.get("ALLOW_PRIVATE_CALLBACKS"))


# IPv6 prefixes that carry an IPv4 address in their last 32 bits: NAT64 (RFC 6052, and the local-use
# 64:ff9b:1::/48 of RFC 8215), SIIT's IPv4-translated ::ffff:0:0/96, and the deprecated
# IPv4-compatible ::/96.
EMBEDDING_PREFIXES = tuple(
    ipaddress.ip_network(prefix)
    for prefix in ("64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0:0/96", "::/96")
)


def embedded_ipv4(ip):
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64, Teredo, compatible), or
    None."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in prefix for prefix in EMBEDDING_PREFIXES):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public_address(address):
    """Whether an IP address is globally routable; an IPv6 one carrying an IPv4 one is judged by
    both.

    Through a NAT64 gateway 64:ff9b::a00:1 reaches 10.0.0.1, and 2002:a00:1:: is 10.0.0.1 over 6to4:
    each is refused like the IPv4 address it carries.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6:
        inner = embedded_ipv4(ip)
        if inner is not None:
            # The local-use NAT64 prefix translates into some private network: never public.
            return is_public_address(str(inner)) and ip not in EMBEDDING_PREFIXES[1]
    # is_global is False for private, loopback, link-local, shared (100.64/10), reserved and
    # multicast.
    return ip.is_global and not ip.is_multicast


def resolve(host, port):
    """Every address a host name resolves to, in the resolver's order of preference; an IP literal
    is itself.
    """
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(info[4][0] for info in infos))


def checked_destination(url, strict=True):
    """(why `url` may not receive webhooks here, or None; the checked addresses to connect to, or
    None).

    The addresses are None when private callbacks are allowed: the connection may then resolve the
    name itself. Otherwise the sender must connect to one of exactly these, in the resolver's order,
    since resolving the name again may give another answer (DNS rebinding). `strict` (at delivery)
    also refuses a host that does not resolve; at creation such a host is let through, since its DNS
    may not exist yet and every delivery checks again.
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
