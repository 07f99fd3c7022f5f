"""Where the gateway may connect on a merchant's say-so (webhook and IPN receivers, SMTP servers):
public addresses only, unless the deployment allows private ones (ALLOW_PRIVATE_CALLBACKS).

One rule for every such destination: a name is refused on sight when it is private by its form
(`static_refusal`), then every address it resolves to must be public, and the connection goes to
one of exactly those addresses (`checked_host`).
"""

import ipaddress
import re
import socket

from flask import current_app

# Why `checked_host` refused a host; each caller says it in its own words.
PRIVATE_NAME = "private_name"  # private by its form: no DNS needed to know
PRIVATE_ADDRESS = "private_address"  # resolves to a private, loopback or link-local address
UNRESOLVED = "unresolved"  # does not resolve (refused only when connecting)

# Names that only ever mean a machine of this network: RFC 6761's localhost, mDNS's local, the
# private-use internal (ICANN, 2024), home.arpa (RFC 8375), and the undelegated names routers and
# company networks use (metadata.google.internal is the cloud's metadata server).
INTERNAL_SUFFIXES = (
    "localhost",
    "local",
    "localdomain",
    "internal",
    "intranet",
    "private",
    "corp",
    "home",
    "lan",
    "home.arpa",
    # Public names whose DNS answers only loopback, for every name under them.
    "localtest.me",
    "lvh.me",
    "vcap.me",
    "localhost.direct",
)
# Wildcard DNS services that answer the address written into the name in hexadecimal or IPv6 form
# too; elsewhere eight hex digits in a name are more likely a hash than an address.
WILDCARD_DNS = ("nip.io", "sslip.io", "xip.io")
# An IPv4 address written into a name with dashes (nip.io's magic-127-0-0-1, sslip.io's 10-0-0-1).
DASHED_IPV4 = re.compile(r"(?:^|-)(\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3})(?=-|$)")
# nip.io's hexadecimal form: 7f000001.nip.io, app-7f000001.nip.io.
HEX_IPV4 = re.compile(r"(?:^|-)([0-9a-f]{8})$")


def private_destinations_allowed():
    """Whether this deployment may connect to private, loopback or link-local addresses."""
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


def literal_addresses(name):
    """The address a host name is, in any form the resolver reads without asking DNS: ::1,
    127.0.0.1, and the legacy IPv4 forms 127.1, 2130706433 and 0x7f.1."""
    found = []
    try:
        found.append(str(ipaddress.ip_address(name.strip("[]").split("%", 1)[0])))
    except ValueError:
        pass
    if re.fullmatch(r"[0-9a-fx.]+", name):
        try:
            found.append(socket.inet_ntoa(socket.inet_aton(name)))
        except OSError:
            pass
    return found


def embedded_addresses(name):
    """The IP addresses written into a host name as wildcard DNS services answer them:
    10.0.0.1.nip.io, app-10-0-0-1.sslip.io; under those services also 7f000001.nip.io and
    --1.sslip.io.
    """
    found = []
    labels = name.split(".")
    for start in range(len(labels) - 3):
        quad = labels[start : start + 4]
        if all(label.isdigit() and len(label) <= 3 for label in quad):
            found.append(".".join(quad))
    for label in labels:
        found.extend(match.group(1).replace("-", ".") for match in DASHED_IPV4.finditer(label))
    if not any(name.endswith("." + domain) for domain in WILDCARD_DNS):
        return found
    for label in labels:
        hexed = HEX_IPV4.search(label)
        if hexed:
            found.append(str(ipaddress.IPv4Address(int(hexed.group(1), 16))))
        if "--" in label:  # sslip.io's IPv6 form: dashes for colons
            found.append(label.replace("-", ":"))
    return found


def private_addresses(addresses):
    """Whether any of these is not a public address (a string that is no address is skipped)."""
    for address in addresses:
        try:
            if not is_public_address(address):
                return True
        except ValueError:  # 999.0.0.1, or a dashed label that is no IPv6 address
            continue
    return False


def static_refusal(host):
    """Why a host is refused by its form alone, without DNS: PRIVATE_ADDRESS for an address literal
    that is not public, PRIVATE_NAME for a name that is private, else None.

    Trailing dots are the same name (localhost. is localhost); a name under an internal suffix, or
    one that carries a non-public address (127.0.0.1.nip.io), is private.
    """
    name = (host or "").strip().lower().rstrip(".")
    if not name:
        return PRIVATE_NAME
    if private_addresses(literal_addresses(name)):
        return PRIVATE_ADDRESS
    if any(name == suffix or name.endswith("." + suffix) for suffix in INTERNAL_SUFFIXES):
        return PRIVATE_NAME
    if private_addresses(embedded_addresses(name)):
        return PRIVATE_NAME
    return None


def resolve(host, port):
    """Every address a host name resolves to, in the resolver's order of preference; an IP literal
    is itself.
    """
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(info[4][0] for info in infos))


def checked_host(host, port, strict=True):
    """(why `host` may not be connected to, one of the constants above, or None; the checked
    addresses to connect to, or None).

    The addresses are None when private destinations are allowed: the connection may then resolve
    the name itself. Otherwise the caller must connect to one of exactly these, in the resolver's
    order, since resolving the name again may give another answer (DNS rebinding). `strict` (when
    connecting) also refuses a host that does not resolve; when a merchant saves it, such a host is
    let through, since its DNS may not exist yet and every connection checks again.
    """
    if private_destinations_allowed():
        return None, None
    refusal = static_refusal(host)
    if refusal is not None:
        return refusal, None
    try:
        addresses = resolve(host, port)
    except (OSError, ValueError, UnicodeError):
        return (UNRESOLVED if strict else None), None
    if not addresses or not all(is_public_address(address) for address in addresses):
        return PRIVATE_ADDRESS, None
    return None, addresses
