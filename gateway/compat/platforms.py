"""Which dialect each platform's ready-made plugin speaks, and the base URL it wants pasted."""

from collections import namedtuple

from flask import current_app

from .dialects import DIALECTS

Platform = namedtuple("Platform", "name dialect path setting")

# `path` is appended to the brand's origin: what the plugin's URL setting expects (docs/plugins.md).
PLATFORMS = (
    Platform("WHMCS", "uddoktapay", "/api/checkout-v2", "API URL"),
    Platform("WooCommerce", "uddoktapay", "/api/checkout-v2", "API URL"),
    Platform("FOSSBilling", "piprapay2", "", "PipraPay URL"),
    Platform("Blesta", "piprapay2", "", "PipraPay URL"),
    Platform("Clientexec", "piprapay2", "", "PipraPay URL"),
    Platform("WISECP", "piprapay2", "", "PipraPay URL"),
    Platform("PerfexCRM", "piprapay2", "", "PipraPay URL"),
    Platform("Paymenter", "piprapay3", "/api", "Base URL"),
    Platform("SMM panels", "uddoktapay", "/api/checkout-v2", "API URL"),
    Platform("Laravel", "piprapay3", "/api", "Base URL"),
    Platform("PHP", "uddoktapay", "", "Base URL"),
)


def brand_origin(brand):
    """The origin customers and plugins reach: the brand's own, else BASE_URL."""
    return (brand.base_url or current_app.config["BASE_URL"]).rstrip("/")


def platform_rows(brand):
    """One row per platform: name, dialect title, key header, URL setting and the URL to paste."""
    origin = brand_origin(brand)
    return [
        {
            "name": platform.name,
            "dialect": platform.dialect,
            "dialect_title": DIALECTS[platform.dialect].TITLE,
            "key_header": DIALECTS[platform.dialect].KEY_HEADERS[0],
            "setting": platform.setting,
            "url": origin + platform.path,
        }
        for platform in PLATFORMS
    ]
