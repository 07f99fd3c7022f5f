"""Brand settings without HTTP: every field validated, all or nothing, and a record of what
changed."""

import pytest

from gateway.accounts.brands import update_brand_settings
from gateway.accounts.models.brand import Brand
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db


def test_settings_are_normalised_and_the_changes_returned(brand):
    changed = update_brand_settings(
        brand,
        {
            "name": " Dhaka Crafts ",
            "primary_color": "#ABCDEF",
            "base_url": "https://pay.example.com/",
            "currencies": "usd, bdt, USD",
            "timezone": "Asia/Kolkata",
            "payment_ttl": 900,
            "receipt_sms_enabled": 1,
            "logo_url": "",
        },
    )
    assert changed == {
        "name": ["Test Shop", "Dhaka Crafts"],
        "primary_color": ["#0f766e", "#abcdef"],
        "base_url": [None, "https://pay.example.com"],
        "currencies": ["BDT,USD", "USD,BDT"],
        "timezone": ["Asia/Dhaka", "Asia/Kolkata"],
        "payment_ttl": [None, 900],
        "receipt_sms_enabled": [False, True],
    }
    db.session.expire_all()
    assert db.session.get(Brand, brand.id).currency_list == ["USD", "BDT"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("name", ""),
        ("name", "x" * 121),
        ("primary_color", "red"),
        ("primary_color", "#12345"),
        ("base_url", "ftp://pay.example.com"),
        ("logo_url", "//cdn.example/logo.png"),
        # Hosts that would add directives to the checkout's Content-Security-Policy.
        ("logo_url", "https://cdn.example;script-src *"),
        ("logo_url", "https://cdn.example;script-src/logo.png"),
        ("logo_url", "https://cdn.example,evil.example/logo.png"),
        ("logo_url", "https://cdn.example'unsafe-inline'/logo.png"),
        ("logo_url", "https://cdn.example/logo.png; script-src 'unsafe-inline'"),
        ("timezone", "Dhaka"),
        ("timezone", ""),
        ("currencies", ""),
        ("currencies", "BDT,TK"),
        ("payment_ttl", 30),
        ("payment_ttl", 86401),
        ("payment_ttl", "600"),
        ("webhook_secret", "whsec_mine"),
    ],
)
def test_a_bad_setting_is_refused_naming_its_field_and_nothing_changes(brand, field, value):
    with pytest.raises(DomainError) as refused:
        update_brand_settings(brand, {"name": "Renamed", field: value})
    assert (http_status(refused.value), refused.value.errors[0]["field"]) == (422, field)
    db.session.expire_all()
    assert db.session.get(Brand, brand.id).name == "Test Shop"


def test_an_empty_lifetime_falls_back_to_the_server_default(brand):
    brand.payment_ttl = 600
    db.session.commit()
    assert update_brand_settings(brand, {"payment_ttl": None}) == {"payment_ttl": [600, None]}
