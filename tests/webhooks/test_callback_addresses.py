"""The address check of webhook destinations: an IPv6 address carrying an IPv4 one is judged like
it.
"""

import ipaddress

import pytest

from gateway.webhooks.callback_urls import checked_destination, is_public_address


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
