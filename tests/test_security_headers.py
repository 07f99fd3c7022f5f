"""Every answer carries the security headers: pages, the API, its docs and every front door's error
pages; HSTS over https only; a brand's logo URL cannot add directives to the checkout's policy."""

import base64
import hashlib
import re

import pytest

from gateway import create_app
from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent
from gateway.security_headers import csp_source
from tests.factories import PaymentFactory
from tests.invoices.conftest import an_invoice
from tests.links.support import make_link


def assert_protected(response, where):
    headers = response.headers
    assert headers.get("X-Content-Type-Options") == "nosniff", where
    assert headers.get("Referrer-Policy") == "same-origin", where
    assert headers.get("X-Frame-Options") == "DENY", where
    policy = headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in policy and "base-uri 'none'" in policy, where
    if response.mimetype == "text/html":
        assert "script-src 'self'" in policy and "default-src 'self'" in policy, where
    else:
        assert "default-src 'none'" in policy or "default-src 'self'" in policy, where


@pytest.mark.parametrize(
    "method, path, status",
    [
        ("get", "/nothing-here", 404),
        ("get", "/healthz", 200),
        ("post", "/healthz", 405),
        ("get", "/api/v1/docs", 200),
        ("get", "/api/v1/openapi.json", 200),
        ("get", "/api/v1/nothing-here", 404),
        ("put", "/api/v1/payments", 405),
        ("get", "/api/v1/payments", 401),
        ("get", "/api/mobile/v1/openapi.json", 200),
        ("get", "/api/mobile/v1/nothing-here", 404),
        ("put", "/api/mobile/v1/devices", 405),
        ("get", "/panel/sign-in", 200),
        ("get", "/panel/nothing-here", 404),
        ("put", "/panel/sign-in", 405),
        ("get", "/checkout/no-such-token", 404),
        ("put", "/checkout/no-such-token/claim", 405),
        ("get", "/static/panel.css", 200),
        ("get", "/static/nothing-here.css", 404),
    ],
)
def test_every_front_door_answer_carries_the_security_headers(client, method, path, status):
    response = getattr(client, method)(path)
    response.close()  # a static file's answer holds the file open
    assert response.status_code == status
    assert_protected(response, f"{method.upper()} {path}")
    assert "Strict-Transport-Security" not in response.headers  # plain http


@pytest.fixture
def broken_app(app):
    """An app over a database with no tables: every query fails, so each front door answers 500."""
    broken = create_app(
        {"APP_ENV": "testing", "SQLALCHEMY_DATABASE_URI": "sqlite://", "REDIS_URL": None}
    )
    yield broken
    with broken.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.mark.parametrize(
    "method, path, kwargs",
    [
        ("get", "/api/v1/payments", {"headers": {"Authorization": "Bearer gw_live_x"}}),
        (
            "post",
            "/api/mobile/v1/devices",
            {
                "json": {
                    "pairing_code": "123456",
                    "device_id": "p",
                    "device_name": "P",
                    "fingerprint": "f",
                }
            },
        ),
        ("get", "/panel/sign-in", {}),
        ("get", "/checkout/some-token", {}),
    ],
)
def test_the_500_of_every_front_door_carries_the_security_headers(broken_app, method, path, kwargs):
    response = getattr(broken_app.test_client(), method)(path, **kwargs)
    assert response.status_code == 500
    assert_protected(response, path)


def test_the_docs_page_allows_its_own_inline_script_by_hash_only(client):
    response = client.get("/api/v1/docs")
    policy = response.headers["Content-Security-Policy"]
    [script] = re.findall(rb"<script>(.*?)</script>", response.get_data(), re.S)
    digest = base64.b64encode(hashlib.sha256(script).digest()).decode()
    script_src = next(part for part in policy.split(";") if part.strip().startswith("script-src"))
    assert script_src.split() == ["script-src", "'self'", f"'sha256-{digest}'"]


@pytest.mark.parametrize("path", ["/panel/sign-in", "/api/v1/docs", "/nothing", "/healthz"])
def test_hsts_is_sent_over_https_only(client, path):
    secure = client.get(path, base_url="https://pay.example")
    assert secure.headers["Strict-Transport-Security"] == "max-age=31536000"
    assert "Strict-Transport-Security" not in client.get(path).headers


def test_behind_a_trusted_proxy_hsts_follows_x_forwarded_proto(app):
    proxied = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": None,
            "TRUSTED_PROXIES": 1,
        }
    )
    client = proxied.test_client()
    https = client.get("/panel/sign-in", headers={"X-Forwarded-Proto": "https"})
    http = client.get("/panel/sign-in", headers={"X-Forwarded-Proto": "http"})
    assert https.headers["Strict-Transport-Security"] == "max-age=31536000"
    assert "Strict-Transport-Security" not in http.headers
    # Without a trusted proxy the header is the client's own and is ignored.
    direct = app.test_client().get("/panel/sign-in", headers={"X-Forwarded-Proto": "https"})
    assert "Strict-Transport-Security" not in direct.headers
    with proxied.app_context():
        db.session.remove()
        db.engine.dispose()


def brand_pages(brand):
    """Every public page dressed in the brand's look: the checkout, a payment link, an invoice."""
    payment = PaymentFactory(brand=brand)
    link = make_link(brand)
    invoice = an_invoice(brand)
    mark_sent(invoice)
    db.session.commit()
    return [f"/checkout/{payment.token}", f"/pay/{link.slug}", f"/invoice/{invoice.token}"]


@pytest.mark.parametrize(
    "logo_url",
    [
        "https://cdn.example;script-src *",
        "https://cdn.example;frame-ancestors *;form-action *;base-uri */logo.png",
        "https://cdn.example;script-src 'unsafe-inline'/logo.png",
        "https://cdn.example,evil.example/logo.png",
    ],
)
def test_a_stored_logo_url_cannot_add_directives_to_a_brand_page_policy(client, brand, logo_url):
    brand.logo_url = logo_url  # written before validation existed, or straight into the table
    db.session.commit()
    for url in brand_pages(brand):
        answer = client.get(url)
        assert answer.status_code == 200, url
        policy = answer.headers["Content-Security-Policy"]
        directives = [part.strip().split()[0] for part in policy.split(";")]
        assert all(directives.count(name) == 1 for name in directives), (url, policy)
        assert "img-src 'self' data:;" in policy and "evil.example" not in policy, url
        assert "*" not in policy and "unsafe-inline'/" not in policy, url


def test_a_good_logo_url_names_its_origin_in_img_src(client, brand):
    brand.logo_url = "https://cdn.example:8443/brand/logo.png"
    db.session.commit()
    for url in brand_pages(brand):
        policy = client.get(url).headers["Content-Security-Policy"]
        assert "img-src 'self' data: https://cdn.example:8443;" in policy, url


@pytest.mark.parametrize(
    "url, source",
    [
        ("https://cdn.example/logo.png", "https://cdn.example"),
        ("http://198.51.100.4:8080/x.png", "http://198.51.100.4:8080"),
        ("https://[2001:db8::1]/x.png", "https://[2001:db8::1]"),
        ("https://user:pw@cdn.example/x.png", ""),  # credentials in a URL: left out
        ("https://cdn.example;script-src */x.png", ""),
        ("https://cdn.example:99999/x.png", ""),
        ("javascript:alert(1)", ""),
        ("", ""),
    ],
)
def test_csp_source_names_only_a_plain_origin(url, source):
    assert csp_source(url) == source
