"""Issue 14, finding 1 (defence in depth): every page's policy limits where forms post and forbids
<base>.
"""

import pytest

from tests.factories import PaymentFactory, PaymentMethodFactory, UserFactory
from tests.panel.conftest import panel_client, sign_in


def directives(response):
    """The Content-Security-Policy header as {directive: [values]}."""
    policy = response.headers["Content-Security-Policy"]
    parsed = {}
    for part in policy.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


@pytest.fixture
def shop_payment(brand):
    PaymentMethodFactory(brand=brand, number="01712345678")
    return PaymentFactory(
        brand=brand,
        redirect_url="https://shop.example/thanks",
        cancel_url="https://cart.shop.example:8443/cart?step=2",
    )


@pytest.mark.parametrize("suffix", ["", "/wait", "x"])
def test_checkout_forms_post_here_or_to_the_shops_return_addresses_only(
    client, shop_payment, suffix
):
    response = client.get(f"/checkout/{shop_payment.token}{suffix}")
    policy = directives(response)
    assert policy["base-uri"] == ["'none'"]
    # The cancel and claim forms answer with a 303 to the shop; Chromium checks redirects too.
    assert policy["form-action"][0] == "'self'"
    assert set(policy["form-action"]) <= {
        "'self'",
        "https://shop.example",
        "https://cart.shop.example:8443",
    }


def test_the_pay_page_allows_exactly_its_own_return_origins(client, shop_payment):
    policy = directives(client.get(f"/checkout/{shop_payment.token}"))
    assert policy["form-action"] == [
        "'self'",
        "https://cart.shop.example:8443",
        "https://shop.example",
    ]


@pytest.mark.parametrize(
    "odd",
    [
        "https://shop.example;script-src *",
        "https://shop.example script-src",
        "javascript:alert(1)",
        "https://user@shop.example/x",
    ],
)
def test_an_odd_return_address_never_reaches_the_policy(client, brand, odd):
    payment = PaymentFactory(brand=brand, redirect_url=odd, cancel_url=odd)
    brand.logo_url = odd
    response = client.get(f"/checkout/{payment.token}")
    policy = directives(response)
    assert policy["form-action"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:"]
    assert "script-src" in policy and policy["script-src"] == ["'self'"]


def test_checkout_without_a_payment_allows_only_itself(client):
    policy = directives(client.get("/checkout/" + "x" * 40))
    assert policy["form-action"] == ["'self'"]
    assert policy["base-uri"] == ["'none'"]


def test_panel_pages_post_only_to_the_panel_and_forbid_base(app, brand):
    admin = UserFactory(brand=brand, role="super_admin", email="owner@shop.test")
    client = panel_client(app)
    for page in (client.get("/panel/sign-in"), None):
        if page is None:
            assert sign_in(client, admin).status_code == 302
            page = client.get("/panel/payments")
        policy = directives(page)
        assert policy["form-action"] == ["'self'"]
        assert policy["base-uri"] == ["'none'"]
        assert policy["frame-ancestors"] == ["'none'"]
