"""Every panel page and action: who may open it, CSRF refusal, headers, navigation and language."""

import re
from decimal import Decimal

import pytest

from gateway import create_app
from gateway.accounts.models.audit import AuditLog
from gateway.accounts.models.user import User
from gateway.extensions import db
from gateway.panel.navigation import NAVIGATION
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import (
    CustomerFactory,
    PaymentFactory,
    PaymentMethodFactory,
    UserFactory,
    completed_payment,
)
from tests.panel.conftest import csrf_token, panel_client, reloaded, sign_in

EXTERNAL_RESOURCE = re.compile(
    r"<(?:script|link|img|iframe)[^>]+(?:src|href)=\"(?:https?:)?//", re.I
)


@pytest.fixture
def rows(brand):
    """One of everything a page can show or act on."""
    customer = CustomerFactory(brand=brand)
    paid = completed_payment(brand=brand, customer=customer)
    review = PaymentFactory(
        brand=brand,
        status="processing",
        provider="bkash",
        provider_trx_id="AB12CD34EF",
        review_reason="SMS amount 450.00 differs from 500.00",
    )
    method = PaymentMethodFactory(brand=brand)
    colleague = UserFactory(brand=brand, email="colleague@shop.test")
    return {
        "customer": customer,
        "paid": paid,
        "review": review,
        "method": method,
        "colleague": colleague,
        "brand": brand,
    }


def pages(rows):
    """Every page of the panel with the rows above."""
    return [
        "/panel/dashboard",
        "/panel/payments",
        "/panel/payments?status=review&method=bkash&q=AB12&date_from=2020-01-01",
        f"/panel/payments/{rows['paid'].public_id}",
        f"/panel/payments/{rows['review'].public_id}",
        "/panel/customers",
        f"/panel/customers/{rows['customer'].id}",
        f"/panel/customers/{rows['customer'].id}/edit",
        "/panel/refunds",
        "/panel/settings",
        "/panel/users",
        "/panel/audit-log",
        "/panel/account/password",
    ]


def actions(rows):
    """Every POST of the panel (sign-in aside) with a valid body, and how to tell that it changed
    nothing.
    """
    paid, review, customer, method, colleague = (
        rows[key] for key in ("paid", "review", "customer", "method", "colleague")
    )
    return [
        (
            f"/panel/payments/{paid.public_id}/refund",
            {"amount": "100"},
            lambda: reloaded(paid).amount_refunded == 0,
        ),
        (
            f"/panel/payments/{review.public_id}/cancel",
            {},
            lambda: reloaded(review).status == "processing",
        ),
        (
            f"/panel/payments/{review.public_id}/approve",
            {},
            lambda: reloaded(review).status == "processing",
        ),
        (
            f"/panel/payments/{review.public_id}/reject",
            {},
            lambda: reloaded(review).status == "processing",
        ),
        (
            f"/panel/customers/{customer.id}/edit",
            {"name": "Changed"},
            lambda: reloaded(customer).name != "Changed",
        ),
        (
            f"/panel/customers/{customer.id}/delete",
            {},
            lambda: db.session.get(Customer, customer.id) is not None,
        ),
        (
            "/panel/settings",
            {"name": "Changed", "primary_color": "#123456", "timezone": "UTC", "currencies": "BDT"},
            lambda: reloaded(rows["brand"]).name == "Test Shop",
        ),
        (
            "/panel/settings/methods",
            {"provider": "nagad", "number": "01811111111", "kind": "personal"},
            lambda: (
                db.session.execute(db.select(db.func.count()).select_from(PaymentMethod)).scalar()
                == 1
            ),
        ),
        (f"/panel/settings/methods/{method.id}/toggle", {}, lambda: reloaded(method).enabled),
        (
            "/panel/users",
            {"email": "new@shop.test", "role": "staff"},
            lambda: (
                db.session.execute(db.select(User).where(User.email == "new@shop.test")).first()
                is None
            ),
        ),
        (f"/panel/users/{colleague.id}/deactivate", {}, lambda: reloaded(colleague).active),
        (
            "/panel/account/password",
            {
                "current_password": "correct horse battery",
                "new_password": "x" * 12,
                "confirm_password": "x" * 12,
            },
            lambda: all(
                user.check_password("correct horse battery")
                for user in db.session.execute(db.select(User)).scalars()
            ),
        ),
        ("/panel/sign-out", {}, lambda: True),
    ]


def test_every_page_opens_for_a_super_administrator(as_admin, rows):
    for url in pages(rows):
        response = as_admin.get(url)
        assert response.status_code == 200, url
        assert 'name="csrf_token"' in response.get_data(as_text=True), url


@pytest.mark.parametrize("url", ["/panel/settings", "/panel/users", "/panel/audit-log"])
def test_staff_are_forbidden_from_super_administrator_pages(as_staff, rows, url):
    response = as_staff.get(url)
    assert response.status_code == 403
    assert "Your role does not open this page" in response.get_data(as_text=True)


def test_staff_cannot_change_settings_users_or_methods_either(as_staff, brand, rows):
    token = csrf_token(as_staff)
    posts = [
        (
            "/panel/settings",
            {
                "name": "Taken over",
                "primary_color": "#000000",
                "timezone": "UTC",
                "currencies": "BDT",
            },
        ),
        (
            "/panel/settings/methods",
            {"provider": "nagad", "number": "01811111111", "kind": "personal"},
        ),
        (f"/panel/settings/methods/{rows['method'].id}/toggle", {}),
        ("/panel/users", {"email": "mole@shop.test", "role": "super_admin"}),
        (f"/panel/users/{rows['colleague'].id}/deactivate", {}),
    ]
    for url, data in posts:
        assert as_staff.post(url, data={**data, "csrf_token": token}).status_code == 403, url
    assert (
        reloaded(brand).name == "Test Shop"
        and reloaded(rows["method"]).enabled
        and reloaded(rows["colleague"]).active
    )
    assert db.session.execute(db.select(User).where(User.email == "mole@shop.test")).first() is None


def test_staff_open_the_everyday_pages(as_staff, rows):
    for url in pages(rows):
        if url.split("?")[0] not in ("/panel/settings", "/panel/users", "/panel/audit-log"):
            assert as_staff.get(url).status_code == 200, url


def test_signed_out_visitors_are_sent_to_sign_in_from_every_page(client, rows):
    for url in pages(rows):
        response = client.get(url)
        assert response.status_code == 302 and response.headers["Location"].startswith(
            "/panel/sign-in?next="
        ), url


def test_every_action_without_a_csrf_token_is_refused_and_changes_nothing(as_admin, brand, rows):
    entries_before = db.session.execute(db.select(db.func.count()).select_from(AuditLog)).scalar()
    for url, data, unchanged in actions(rows):
        response = as_admin.post(url, data=data)
        assert response.status_code == 400, url
        assert "The form had expired" in response.get_data(as_text=True)
        assert unchanged(), url
    assert reloaded(brand).name == "Test Shop"
    assert (
        db.session.execute(db.select(db.func.count()).select_from(AuditLog)).scalar()
        == entries_before
    )


def test_a_forged_token_is_refused_too(as_admin, rows):
    paid = rows["paid"]
    response = as_admin.post(
        f"/panel/payments/{paid.public_id}/refund", data={"amount": "100", "csrf_token": "forged"}
    )
    assert response.status_code == 400
    assert reloaded(paid).amount_refunded == Decimal("0.00")


def test_pages_are_not_cached_framed_or_allowed_foreign_scripts(as_admin):
    headers = as_admin.get("/panel/dashboard").headers
    assert headers["Cache-Control"] == "no-store"
    assert headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]


def test_pages_load_nothing_from_other_sites(as_admin, rows):
    for url in pages(rows):
        html = as_admin.get(url).get_data(as_text=True)
        assert not EXTERNAL_RESOURCE.search(html), url


def test_the_sidebar_shows_staff_no_administration_links(as_staff):
    html = as_staff.get("/panel/dashboard").get_data(as_text=True)
    assert 'href="/panel/payments"' in html and 'href="/panel/customers"' in html
    assert (
        'href="/panel/settings"' not in html
        and 'href="/panel/users"' not in html
        and 'href="/panel/audit-log"' not in html
    )


def test_the_sidebar_links_pages_of_other_parts_only_once_they_exist(app, as_admin, admin):
    endpoints = {entry.endpoint for _, entries in NAVIGATION for entry in entries}
    missing = sorted(endpoint for endpoint in endpoints if endpoint not in app.view_functions)
    sidebar = (
        as_admin.get("/panel/dashboard")
        .get_data(as_text=True)
        .split('<nav class="nav"')[1]
        .split("</nav>")[0]
    )
    assert sidebar.count('<li><a href="/panel/') == len(endpoints) - len(missing)
    if not missing:
        return  # every page has arrived, and the count above shows each one linked
    # Another app on the same database, where one of those pages has arrived.
    later = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
        }
    )
    later.add_url_rule("/panel/arrived", endpoint=missing[0], view_func=lambda: "arrived")
    client = panel_client(later)
    sign_in(client, admin)
    try:
        assert 'href="/panel/arrived"' in client.get("/panel/dashboard").get_data(as_text=True)
    finally:
        with later.app_context():
            db.engine.dispose()


def test_the_current_page_is_marked_in_the_sidebar(as_admin, rows):
    html = as_admin.get(f"/panel/payments/{rows['paid'].public_id}").get_data(as_text=True)
    assert 'href="/panel/payments" class="active" aria-current="page"' in html


def test_pages_switch_to_bangla_and_remember_it(as_admin):
    html = as_admin.get("/panel/dashboard?lang=bn").get_data(as_text=True)
    assert '<html lang="bn">' in html
    assert '<html lang="bn">' in as_admin.get("/panel/payments").get_data(as_text=True)
    assert '<html lang="en">' in as_admin.get("/panel/payments?lang=en").get_data(as_text=True)


def test_an_unknown_panel_page_is_a_panel_404(as_admin):
    response = as_admin.get("/panel/payments/not-a-payment")
    assert response.status_code == 404
    assert "belongs to another brand" in response.get_data(as_text=True)


def test_panel_root_opens_the_dashboard(as_admin):
    assert as_admin.get("/panel/").headers["Location"] == "/panel/dashboard"


def language_links(html):
    return dict(re.findall(r'<a class="language" lang="(\w+)" hreflang="\w+" href="([^"]*)"', html))


def test_the_language_links_keep_the_page_s_query_whole(as_admin):
    html = as_admin.get("/panel/payments?status=completed&status=refunded&q=ORDER&lang=en")
    assert language_links(html.get_data(as_text=True))["bn"] == (
        "/panel/payments?status=completed&amp;status=refunded&amp;q=ORDER&amp;lang=bn"
    )


@pytest.mark.parametrize(
    "query", ["_scheme=x&_external=", "_external=1", "_anchor=%0Aalert(1)", "_method=POST"]
)
def test_url_building_options_in_a_query_are_only_carried_along(as_admin, query):
    answer = as_admin.get(f"/panel/payments?{query}")
    assert answer.status_code == 200
    link = language_links(answer.get_data(as_text=True))["bn"]
    assert link.startswith("/panel/payments?_") and link.endswith("&amp;lang=bn")
    assert "#" not in link
