"""The address check of webhook destinations: an IPv6 address carrying an IPv4 one is judged like
it.
"""

import ipaddress
import socket

import pytest

from gateway.destinations import is_public_address
from gateway.domain_errors import ValidationFailed
from gateway.webhooks.callback_urls import check_callback_url, checked_destination


@pytest.mark.parametrize(
    "address",
    [
        "::ffff:10.0.0.1",  # IPv4-mapped
        "64:ff9b::10.0.0.1",  # NAT64 well-known prefix
        "64:ff9b::169.254.169.254",
        "64:ff9b::127.0.0.1",
        "64:ff9b:1::8.8.8.8",  # local-use NAT64: always some private network
        "2002:a00:1::",  # 6to4 of 10.0.0.1
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "::127.0.0.1",  # IPv4-compatible
        "::192.168.1.5",
        "::ffff:0:192.168.1.5",  # IPv4-translated (SIIT)
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    ],
)
def test_an_ipv6_address_carrying_a_private_ipv4_one_is_refused(app, monkeypatch, address):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    assert not is_public_address(address)
    reason, addresses = checked_destination(f"http://[{address}]/hooks")
    assert reason is not None and addresses is None


@pytest.mark.parametrize(
    "address", ["64:ff9b::8.8.8.8", "2002:808:808::1", "2606:4700:4700::1111", "8.8.8.8"]
)
def test_a_public_address_in_any_form_is_accepted(app, monkeypatch, address):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    assert is_public_address(address)
    host = f"[{address}]" if ":" in address else address
    reason, addresses = checked_destination(f"http://{host}/hooks")
    assert reason is None and [ipaddress.ip_address(a) for a in addresses] == [
        ipaddress.ip_address(address)
    ]


@pytest.fixture
def no_dns(monkeypatch):
    """A resolver that answers nothing and records every name asked: what creation sees offline."""
    asked = []

    def getaddrinfo(host, *args, **kwargs):
        asked.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost./hooks",  # the trailing dot is the same name
        "http://LOCALHOST../hooks",
        "http://shop.localhost./hooks",
        "http://127.0.0.1./hooks",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata.google.internal./computeMetadata/v1/",
        "http://printer.lan/hooks",
        "http://nas.local/hooks",
        "http://router.home.arpa/hooks",
        "http://127.0.0.1.nip.io/hooks",
        "http://app.10.0.0.1.nip.io/hooks",
        "http://169.254.169.254.sslip.io/latest/meta-data",
        "http://app-192-168-1-5.sslip.io/hooks",
        "http://magic-127-0-0-1.nip.io/hooks",
        "http://7f000001.nip.io/hooks",
        "http://--1.sslip.io/hooks",
        "http://shop.lvh.me/hooks",
        "http://2130706433/hooks",  # 127.0.0.1 in the resolver's legacy forms
        "http://0x7f.1/hooks",
    ],
)
def test_a_private_host_is_refused_at_creation_without_asking_dns(app, monkeypatch, no_dns, url):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    with pytest.raises(ValidationFailed) as refused:
        check_callback_url(url)
    assert refused.value.errors[0]["field"] == "callback_url"
    assert refused.value.errors[0]["code"] == "private_address"
    assert no_dns == []
    reason, addresses = checked_destination(url)  # delivery refuses it for the same reason
    assert reason == checked_destination(url, strict=False)[0] and addresses is None


@pytest.mark.parametrize(
    "url",
    [
        "https://shop.example.com/hooks",
        "https://8.8.8.8.nip.io/hooks",  # a wildcard name carrying a public address
        "https://app-93-184-215-14.sslip.io/hooks",
        "https://preview-7f3a9c21.example.app/hooks",  # eight hex digits outside nip.io: a hash
        "https://internal.example.com/hooks",  # internal as a label, not the suffix
        "https://merchant.test/hooks",
    ],
)
def test_a_public_name_that_does_not_resolve_yet_is_accepted_at_creation(
    app, monkeypatch, no_dns, url
):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    check_callback_url(url)
    assert no_dns != []
    assert checked_destination(url) == ("The callback URL's host does not resolve.", None)
