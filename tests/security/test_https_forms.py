"""Customer and panel forms over https behind nginx: every page sends `Referrer-Policy:
same-origin`, so a browser posts each form with the Referer that Flask-WTF's strict https check
demands, and a form posted without it is refused.

The app runs as the README's deployment runs it (TRUSTED_PROXIES=1, Secure cookies), asked as nginx
asks it: plain http from 127.0.0.1 with Host, X-Forwarded-For and X-Forwarded-Proto: https. The
same forms in a real browser over real TLS: tests/browser/test_production_https_browser.py.
"""

import re
from pathlib import Path

import pytest

from gateway import create_app
from gateway.compat.keys import generate_compat_key
from gateway.compat.models.compat import CompatPayment
from gateway.extensions import db
from gateway.invoices.lifecycle import mark_sent
from gateway.links.models.link import LinkPayment
from gateway.payments.lifecycle import complete_payment
from gateway.payments.models.payment import Payment
from gateway.security_headers import REFERRER_POLICY
from tests.compat.conftest import P2_HEADER
from tests.compat.test_compat_errors import P2_BODY
from tests.factories import PaymentFactory, PaymentMethodFactory, UserFactory, reload
from tests.invoices.conftest import an_invoice
from tests.links.support import make_link
from tests.panel.conftest import PASSWORD, TOKEN

DOMAIN = "pay.example.com"
ORIGIN = f"https://{DOMAIN}"
CLIENT = "198.51.100.7"
META_REFERRER = re.compile(r"<meta[^>]+name=[\"']?referrer", re.I)


@pytest.fixture(scope="module")
def deployed(app):
    """The app with the deployment's proxy and cookie settings, over the suite's database."""
    proxied = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
            "WTF_CSRF_ENABLED": True,
            "TRUSTED_PROXIES": 1,
            "SESSION_COOKIE_SECURE": True,
            "BASE_URL": ORIGIN,
        }
    )
    yield proxied
    with proxied.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def nginx(deployed):
    """A fresh browser's test client of the deployed app, each request arriving as nginx forwards
    it.
    """
    client = deployed.test_client()
    client.environ_base.update(
        {
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_X_FORWARDED_FOR": CLIENT,
            "HTTP_X_FORWARDED_PROTO": "https",
        }
    )
    return client


def fetch(client, method, path, referer=None, headers=None, **kwargs):
    """One request as nginx passes it on (Host without the port, plain http to gunicorn)."""
    headers = {**(headers or {}), **({"Referer": referer} if referer else {})}
    return client.open(path, method=method, base_url=f"http://{DOMAIN}", headers=headers, **kwargs)


def form_token(client, path):
    """The CSRF token of the form a page hands this client."""
    page = fetch(client, "GET", path)
    assert page.status_code == 200, (path, page.status_code)
    return TOKEN.search(page.get_data(as_text=True)).group(1)


def checkout_claim(brand):
    """The pay page's TrxID form; done when the payment moved to processing."""
    method = PaymentMethodFactory(brand=brand, number="01712345678")
    payment = PaymentFactory(brand=brand)
    path = f"/checkout/{payment.token}"
    fields = {"method_id": method.id, "trx_id": "8N7A6B5C4D"}
    return path, f"{path}/claim", fields, lambda: reload(payment).status == "processing"


def checkout_cancel(brand):
    """The pay page's cancel button; done when the payment is cancelled."""
    PaymentMethodFactory(brand=brand, number="01712345678")
    payment = PaymentFactory(brand=brand, cancel_url="https://shop.example/cart")
    path = f"/checkout/{payment.token}"
    return path, f"{path}/cancel", {}, lambda: reload(payment).status == "cancelled"


def link_form(brand):
    """A payment link's form; done when it opened a payment."""
    link = make_link(brand, slug="eid-hamper")
    done = lambda: db.session.execute(db.select(LinkPayment)).first() is not None  # noqa: E731
    return f"/pay/{link.slug}", f"/pay/{link.slug}", {}, done


def invoice_pay(brand):
    """An invoice's Pay button; done when it opened the invoice's payment."""
    invoice = an_invoice(brand)
    mark_sent(invoice)
    db.session.commit()
    path = f"/invoice/{invoice.token}"
    done = lambda: db.session.execute(db.select(Payment)).first() is not None  # noqa: E731
    return path, f"{path}/pay", {}, done


def panel_sign_in(brand):
    """The panel's sign-in form; done when the owner's sign-in time was written."""
    owner = UserFactory(brand=brand, role="staff", email="owner@shop.test")
    fields = {"email": owner.email, "password": PASSWORD}
    return "/panel/sign-in", "/panel/sign-in", fields, lambda: reload(owner).last_login_at


FORMS = {
    "checkout claim": checkout_claim,
    "checkout cancel": checkout_cancel,
    "payment link": link_form,
    "invoice pay": invoice_pay,
    "panel sign-in": panel_sign_in,
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    "referer",
    [
        pytest.param("page", id="same-origin: the page's address"),
        pytest.param("origin", id="strict-origin: the origin alone"),
    ],
)
def test_a_form_posted_with_the_referer_a_browser_sends_is_accepted(nginx, brand, form, referer):
    page, action, fields, done = FORMS[form](brand)
    token = form_token(nginx, page)
    sent = ORIGIN + page if referer == "page" else ORIGIN + "/"
    response = fetch(nginx, "POST", action, referer=sent, data={**fields, "csrf_token": token})
    assert response.status_code in (302, 303), response.get_data(as_text=True)[:500]
    assert done()


# Every form without a Referer (what no-referrer left) or with another site's; the checkout's claim
# also with each near miss of our origin.
REFUSED = [
    *(
        pytest.param(form, referer, id=f"{form}: {why}")
        for form in FORMS
        for referer, why in ((None, "none"), ("https://shop.example/cart", "another site"))
    ),
    pytest.param("checkout claim", f"http://{DOMAIN}/", id="plain http"),
    pytest.param("checkout claim", f"https://{DOMAIN}:8443/", id="another port"),
    pytest.param("checkout claim", f"https://evil.{DOMAIN}/", id="a subdomain"),
]


@pytest.mark.parametrize("form, referer", REFUSED)
def test_a_form_posted_without_a_same_origin_referer_is_refused(nginx, brand, form, referer):
    page, action, fields, done = FORMS[form](brand)
    token = form_token(nginx, page)
    response = fetch(nginx, "POST", action, referer=referer, data={**fields, "csrf_token": token})
    assert response.status_code == 400
    assert not done()


def customer_pages(brand):
    """Every kind of page a customer or merchant opens: (method, path) pairs."""
    PaymentMethodFactory(brand=brand, number="01712345678")
    payment = PaymentFactory(brand=brand)
    processing = PaymentFactory(brand=brand, status="processing")
    done = PaymentFactory(brand=brand)
    complete_payment(done, provider="bkash", provider_trx_id="BK12345678")
    link = make_link(brand, slug="eid-hamper")
    invoice = an_invoice(brand)
    mark_sent(invoice)
    db.session.commit()
    return {
        "pay page": f"/checkout/{payment.token}",
        "waiting page": f"/checkout/{processing.token}/wait",
        "result page": f"/checkout/{done.token}",
        "checkout not found": "/checkout/no-such-token",
        "payment link": f"/pay/{link.slug}",
        "invoice": f"/invoice/{invoice.token}",
        "panel sign-in": "/panel/sign-in",
    }


@pytest.mark.parametrize(
    "page",
    [
        "pay page",
        "waiting page",
        "result page",
        "checkout not found",
        "payment link",
        "invoice",
        "panel sign-in",
    ],
)
def test_every_page_sends_same_origin_and_nothing_overrides_it(nginx, brand, page):
    path = customer_pages(brand)[page]
    response = fetch(nginx, "GET", path)
    assert response.status_code in (200, 404)
    assert response.headers["Referrer-Policy"] == REFERRER_POLICY == "same-origin"
    assert response.headers["Strict-Transport-Security"]  # nginx's X-Forwarded-Proto believed
    assert not META_REFERRER.search(response.get_data(as_text=True))


def test_the_plugin_post_return_sends_same_origin_too(nginx, brand):
    _, secret = generate_compat_key(brand, "plugin", "piprapay2")
    body = {**P2_BODY, "return_type": "POST"}
    created = fetch(nginx, "POST", "/api/create-charge", json=body, headers={P2_HEADER: secret})
    row = db.session.execute(
        db.select(CompatPayment).where(CompatPayment.external_id == str(created.json["pp_id"]))
    ).scalar_one()
    complete_payment(row.payment, provider="bkash", provider_trx_id="BK12345678")
    db.session.commit()
    page = fetch(nginx, "GET", f"/compat/return/{row.return_token}")
    assert page.status_code == 200 and 'method="post"' in page.get_data(as_text=True)
    assert page.headers["Referrer-Policy"] == "same-origin"
    assert not META_REFERRER.search(page.get_data(as_text=True))


def test_a_refused_checkout_form_says_please_try_again_in_the_brands_look(nginx, brand):
    page, action, fields, done = checkout_claim(brand)
    token = form_token(nginx, page)
    response = fetch(nginx, "POST", action, data={**fields, "csrf_token": token})
    assert response.status_code == 400 and "Please try again" in response.get_data(as_text=True)
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert not done()


def test_no_template_overrides_the_policy_with_a_meta_tag():
    # A <meta name="referrer"> outranks the header for the page's forms: the checkout's said
    # no-referrer, and over https no customer form could be posted.
    templates = Path(__file__).resolve().parents[2] / "templates"
    overriding = [
        str(path.relative_to(templates))
        for path in templates.rglob("*.html")
        if META_REFERRER.search(path.read_text())
    ]
    assert overriding == []
