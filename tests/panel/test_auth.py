"""Signing in and out of the panel, changing one's password, and the limits around them."""

import pytest

from gateway import create_app
from gateway.accounts.models.audit import AuditLog
from gateway.accounts.models.user import User
from gateway.extensions import db
from tests.factories import UserFactory
from tests.limited_apps import limited_app as rate_limited
from tests.panel.conftest import (
    PASSWORD,
    audit_actions,
    csrf_token,
    panel_client,
    post_form,
    sign_in,
)


def signed_in(client):
    """Whether the client's session opens the dashboard."""
    return client.get("/panel/dashboard").status_code == 200


def test_a_signed_out_visitor_is_sent_to_sign_in_and_back(client, admin):
    response = client.get("/panel/customers")
    assert response.status_code == 302
    assert response.headers["Location"] == "/panel/sign-in?next=%2Fpanel%2Fcustomers"
    token = csrf_token(client, "/panel/sign-in")
    back = client.post(
        "/panel/sign-in?next=%2Fpanel%2Fcustomers",
        data={"email": admin.email, "password": PASSWORD, "csrf_token": token},
    )
    assert back.headers["Location"] == "/panel/customers"


def test_signing_in_opens_the_dashboard_and_is_audited_with_address_and_browser(
    client, brand, admin
):
    token = csrf_token(client, "/panel/sign-in")
    response = client.post(
        "/panel/sign-in",
        data={"email": "OWNER@shop.test ", "password": PASSWORD, "csrf_token": token},
        headers={"User-Agent": "Firefox/130"},
    )
    assert response.status_code == 302 and response.headers["Location"] == "/panel/dashboard"
    entry = db.session.execute(db.select(AuditLog)).scalar_one()
    assert (entry.action, entry.user_id, entry.ip_address, entry.user_agent) == (
        "sign_in",
        admin.id,
        "127.0.0.1",
        "Firefox/130",
    )
    assert db.session.get(User, admin.id).last_login_at is not None


@pytest.mark.parametrize(
    "target",
    ["https://evil.test/panel/", "//evil.test/panel/", "/api/v1/payments", "javascript:alert(1)"],
)
def test_sign_in_never_sends_the_user_off_the_panel(client, admin, target):
    token = csrf_token(client, "/panel/sign-in")
    response = client.post(
        "/panel/sign-in",
        query_string={"next": target},
        data={"email": admin.email, "password": PASSWORD, "csrf_token": token},
    )
    assert response.headers["Location"] == "/panel/dashboard"


def test_a_wrong_password_is_refused_and_logged_against_the_account(client, brand, admin):
    response = sign_in(client, admin, password="not the password")
    assert response.status_code == 200
    assert "The e-mail or password is not correct." in response.get_data(as_text=True)
    assert not signed_in(client)
    assert audit_actions(brand) == [("sign_in.failed", None, admin.email)]


def test_an_unknown_e_mail_reads_exactly_like_a_wrong_password(client, brand, admin):
    response = sign_in(client, User(email="nobody@shop.test"))
    assert "The e-mail or password is not correct." in response.get_data(as_text=True)
    assert not signed_in(client)
    assert audit_actions(brand) == []


def test_a_deactivated_user_cannot_sign_in(client, brand):
    user = UserFactory(brand=brand, active=False)
    assert sign_in(client, user).status_code == 200
    assert not signed_in(client)


def test_sign_in_without_a_csrf_token_is_refused(client, admin):
    response = client.post("/panel/sign-in", data={"email": admin.email, "password": PASSWORD})
    assert response.status_code == 400
    assert not signed_in(client)


def test_signing_out_ends_the_session_and_is_audited(as_admin, brand, admin):
    response = post_form(as_admin, "/panel/sign-out")
    assert response.status_code == 302 and response.headers["Location"] == "/panel/sign-in"
    assert not signed_in(as_admin)
    assert audit_actions(brand)[-1] == ("sign_out", admin.email, None)


def test_sign_out_needs_the_csrf_token_so_other_sites_cannot_sign_you_out(as_admin):
    assert as_admin.post("/panel/sign-out").status_code == 400
    assert as_admin.get("/panel/sign-out").status_code == 405
    assert signed_in(as_admin)


def test_the_session_cookie_is_http_only_and_same_site(client, admin):
    response = sign_in(client, admin)
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_a_session_replayed_from_another_browser_is_dropped(client, admin):
    sign_in(client, admin)
    assert client.get("/panel/dashboard", headers={"User-Agent": "Another/1.0"}).status_code == 302


def test_changing_the_password_needs_the_current_one(as_admin, brand, admin):
    response = post_form(
        as_admin,
        "/panel/account/password",
        {
            "current_password": "wrong",
            "new_password": "a new long secret",
            "confirm_password": "a new long secret",
        },
    )
    assert response.status_code == 422
    assert "The current password is not correct." in response.get_data(as_text=True)
    assert db.session.get(User, admin.id).check_password(PASSWORD)


@pytest.mark.parametrize(
    "new, confirm, message",
    [
        ("short", "short", "Use at least 8 characters."),
        ("a new long secret", "another secret", "The two passwords differ."),
        (PASSWORD, PASSWORD, "Choose a password different from the current one."),
    ],
)
def test_a_new_password_must_be_long_repeated_and_new(as_admin, admin, new, confirm, message):
    response = post_form(
        as_admin,
        "/panel/account/password",
        {"current_password": PASSWORD, "new_password": new, "confirm_password": confirm},
    )
    assert message in response.get_data(as_text=True)
    assert db.session.get(User, admin.id).check_password(PASSWORD)


def test_a_changed_password_is_the_one_that_signs_in(as_admin, client, brand, admin):
    response = post_form(
        as_admin,
        "/panel/account/password",
        {
            "current_password": PASSWORD,
            "new_password": "a new long secret",
            "confirm_password": "a new long secret",
        },
    )
    assert response.status_code == 302
    assert audit_actions(brand)[-1] == ("password.change", admin.email, admin.email)
    post_form(as_admin, "/panel/sign-out")
    assert sign_in(client, admin).status_code == 200
    assert sign_in(client, admin, "a new long secret").status_code == 302


def test_a_password_change_ends_every_other_session_but_keeps_this_one(app, as_admin, admin):
    laptop = panel_client(app)
    assert sign_in(laptop, admin).status_code == 302 and signed_in(laptop)

    response = post_form(
        as_admin,
        "/panel/account/password",
        {
            "current_password": PASSWORD,
            "new_password": "a new long secret",
            "confirm_password": "a new long secret",
        },
    )

    assert response.status_code == 302
    assert signed_in(as_admin)
    assert not signed_in(laptop)


def test_a_session_id_without_the_current_password_stamp_is_refused(admin):
    assert User.from_session_id(admin.get_id()) == admin
    assert User.from_session_id(str(admin.id)) is None
    assert User.from_session_id(f"{admin.id}:{'0' * 32}") is None
    assert User.from_session_id("99999999999999999999:x") is None


@pytest.fixture
def limited_app(app):
    """The same database behind an app that enforces LOGIN_RATE_LIMIT=3/minute."""
    with rate_limited(app, LOGIN_RATE_LIMIT="3/minute") as limited:
        yield limited


def test_failed_sign_ins_are_limited_per_address_and_e_mail(limited_app, brand):
    user = UserFactory(brand=brand, email="target@shop.test")
    bystander = UserFactory(brand=brand, email="bystander@shop.test")
    client = panel_client(limited_app)
    for _ in range(3):
        assert sign_in(client, user, "guess").status_code == 200
    blocked = sign_in(client, user, PASSWORD)
    assert blocked.status_code == 429 and "Retry-After" in blocked.headers
    assert "Too many attempts" in blocked.get_data(as_text=True)
    # Another address signs in to another account; the target's e-mail stays limited there too.
    elsewhere = from_address(panel_client(limited_app), "198.51.100.20")
    assert sign_in(elsewhere, bystander).status_code == 302
    assert (
        sign_in(from_address(panel_client(limited_app), "198.51.100.21"), user).status_code == 429
    )


def from_address(client, address):
    """The client, its requests coming from `address`."""
    client.environ_base["REMOTE_ADDR"] = address
    return client


def test_spraying_many_e_mails_from_one_address_is_limited(limited_app, brand):
    victim = UserFactory(brand=brand, email="victim@shop.test")
    client = panel_client(limited_app)
    for number in range(3):
        guessed = UserFactory.build(email=f"guess{number}@shop.test")
        assert sign_in(client, guessed, "Summer2024!").status_code == 200
    assert sign_in(client, victim, "Summer2024!").status_code == 429
    # The victim, from their own address, is not held back.
    assert (
        sign_in(from_address(panel_client(limited_app), "203.0.113.9"), victim).status_code == 302
    )


def test_one_e_mail_guessed_from_many_addresses_is_limited(limited_app, brand):
    user = UserFactory(brand=brand, email="wanted@shop.test")
    for number in range(3):
        client = from_address(panel_client(limited_app), f"203.0.113.{number + 1}")
        assert sign_in(client, user, "guess").status_code == 200
    blocked = sign_in(from_address(panel_client(limited_app), "203.0.113.50"), user)
    assert blocked.status_code == 429


def test_successful_sign_ins_do_not_use_up_attempts(limited_app, brand):
    user = UserFactory(brand=brand, email="regular@shop.test")
    for _ in range(4):
        client = panel_client(limited_app)
        assert sign_in(client, user).status_code == 302
