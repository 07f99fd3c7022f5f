"""Roles in practice: who may give which role, the last owner, staff refund limits, and sessions
ending.
"""

from decimal import Decimal
from types import SimpleNamespace

import pytest

from gateway.accounts.models.user import User
from gateway.accounts.roles import can, may_refund
from gateway.accounts.users import change_role, set_user_active
from gateway.domain_errors import DomainError
from gateway.extensions import db
from tests.factories import CustomerFactory, UserFactory, completed_payment
from tests.panel.conftest import audit_actions, panel_client, post_form, reloaded, sign_in


@pytest.fixture
def owner(brand):
    return UserFactory(brand=brand, role="owner", email="owner@shop.test")


@pytest.fixture
def admin_user(brand):
    return UserFactory(brand=brand, role="admin", email="admin@shop.test")


def signed_in(app, user):
    """A browser signed in as the user."""
    client = panel_client(app)
    assert sign_in(client, user).status_code == 302
    return client


def copied(app, client):
    """Another browser carrying a copy of the client's session cookie."""
    name = app.config["SESSION_COOKIE_NAME"]
    thief = panel_client(app)
    thief.set_cookie(name, client.get_cookie(name).value)
    return thief


def test_a_user_stored_as_super_admin_is_an_owner(brand):
    user = UserFactory(brand=brand, role="super_admin")
    assert reloaded(user).role == "owner" and user.is_super_admin


@pytest.mark.parametrize(
    "role, is_super_admin", [("owner", True), ("admin", True), ("staff", False), ("viewer", False)]
)
def test_is_super_admin_stays_an_alias_for_owners_and_admins(brand, role, is_super_admin):
    assert UserFactory(brand=brand, role=role).is_super_admin is is_super_admin


def test_an_unknown_permission_is_a_programming_error(brand):
    with pytest.raises(ValueError):
        can(UserFactory(brand=brand), "payments.everything")


def test_the_users_page_offers_an_admin_every_role_but_owner(app, admin_user):
    html = signed_in(app, admin_user).get("/panel/users").get_data(as_text=True)
    invite = html[html.index('id="invite-heading"') :]
    assert 'value="admin"' in invite and 'value="viewer"' in invite
    assert 'value="owner"' not in invite


def test_an_owner_creates_an_admin_who_can_then_manage_users(app, brand, owner):
    client = signed_in(app, owner)
    response = post_form(client, "/panel/users", {"email": "new@shop.test", "role": "admin"})
    assert response.status_code == 200
    created = db.session.execute(db.select(User).where(User.email == "new@shop.test")).scalar_one()
    assert created.role == "admin"
    assert audit_actions(brand)[-1] == ("user.invite", owner.email, "new@shop.test")


def test_an_admin_cannot_create_an_owner(app, brand, admin_user):
    client = signed_in(app, admin_user)
    response = post_form(client, "/panel/users", {"email": "boss@shop.test", "role": "owner"})
    assert response.status_code == 422 and "Not a valid choice" in response.get_data(as_text=True)
    assert db.session.execute(db.select(User).where(User.email == "boss@shop.test")).first() is None


def test_an_admin_cannot_promote_anyone_to_owner(app, brand, owner, admin_user):
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    client = signed_in(app, admin_user)
    response = post_form(client, f"/panel/users/{clerk.id}/role", {"role": "owner"}, True)
    assert "Role must be one of admin, staff, viewer." in response.get_data(as_text=True)
    assert reloaded(clerk).role == "staff"


@pytest.mark.parametrize(
    "action, data",
    [("role", {"role": "viewer"}), ("deactivate", {})],
)
def test_an_admin_cannot_demote_or_deactivate_an_owner(app, brand, owner, admin_user, action, data):
    client = signed_in(app, admin_user)
    response = post_form(client, f"/panel/users/{owner.id}/{action}", data, True)
    assert "Only an owner can change an owner." in response.get_data(as_text=True)
    assert (reloaded(owner).role, owner.active) == ("owner", True)


def test_an_admin_sees_no_buttons_against_an_owner(app, owner, admin_user):
    html = signed_in(app, admin_user).get("/panel/users").get_data(as_text=True)
    assert f"/panel/users/{owner.id}/role" not in html
    assert f"/panel/users/{owner.id}/deactivate" not in html


def test_an_owner_changes_a_role_audited_and_the_user_s_sessions_end(app, brand, owner):
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    clerks_browser = signed_in(app, clerk)
    response = post_form(signed_in(app, owner), f"/panel/users/{clerk.id}/role", {"role": "viewer"})
    assert response.status_code == 302
    assert reloaded(clerk).role == "viewer"
    assert audit_actions(brand)[-1] == ("user.role", owner.email, clerk.email)
    assert clerks_browser.get("/panel/payments").status_code == 302  # back to sign-in
    viewer = signed_in(app, clerk)
    assert viewer.get("/panel/payments").status_code == 200


def test_the_guard_keeps_one_active_owner_whoever_acts(brand, owner):
    # An acting owner who is not a row of the brand (as a racing request whose own row just
    # changed would be): only the guarded UPDATE stands between the brand and no owner at all.
    racing_owner = SimpleNamespace(id=-1, role="owner", active=True, is_authenticated=True)
    with pytest.raises(DomainError) as refused:
        set_user_active(owner, False, racing_owner)
    assert "last active owner" in refused.value.message
    with pytest.raises(DomainError) as refused:
        change_role(owner, "admin", racing_owner)
    assert "last active owner must stay an owner" in refused.value.message
    assert (reloaded(owner).role, owner.active) == ("owner", True)


def test_an_owner_can_step_down_while_another_owner_remains(brand, owner):
    partner = UserFactory(brand=brand, role="owner", email="partner@shop.test")
    change_role(owner, "admin", partner)
    assert reloaded(owner).role == "admin"
    with pytest.raises(DomainError):
        set_user_active(
            partner, False, SimpleNamespace(id=-1, role="owner", active=True, is_authenticated=True)
        )
    assert reloaded(partner).active is True


def test_nobody_changes_their_own_role(app, owner):
    response = post_form(
        signed_in(app, owner), f"/panel/users/{owner.id}/role", {"role": "viewer"}, True
    )
    assert "You cannot change your own role." in response.get_data(as_text=True)
    assert reloaded(owner).role == "owner"


def test_signing_out_ends_a_copied_session_too(app, owner):
    browser = signed_in(app, owner)
    thief = copied(app, browser)
    assert thief.get("/panel/dashboard").status_code == 200
    post_form(browser, "/panel/sign-out")
    assert browser.get("/panel/dashboard").status_code == 302
    stolen = thief.get("/panel/dashboard")
    assert stolen.status_code == 302 and "/panel/sign-in" in stolen.headers["Location"]


def test_deactivating_a_user_ends_a_copied_session(app, brand, owner):
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    thief = copied(app, signed_in(app, clerk))
    assert thief.get("/panel/payments").status_code == 200
    post_form(signed_in(app, owner), f"/panel/users/{clerk.id}/deactivate")
    assert thief.get("/panel/payments").status_code == 302


def test_changing_the_password_ends_a_copied_session(app, brand):
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    browser = signed_in(app, clerk)
    thief = copied(app, browser)
    new = "a much longer password"
    form = {
        "current_password": "correct horse battery",
        "new_password": new,
        "confirm_password": new,
    }
    assert post_form(browser, "/panel/account/password", form).status_code == 302
    assert browser.get("/panel/payments").status_code == 200
    assert thief.get("/panel/payments").status_code == 302


@pytest.fixture
def paid(brand):
    return completed_payment(
        brand=brand, amount=Decimal("500.00"), customer=CustomerFactory(brand=brand)
    )


def refund(client, payment, amount):
    """Ask for a refund and confirm it, as the page's two buttons do."""
    url = f"/panel/payments/{payment.public_id}/refund"
    return post_form(client, url, {"amount": amount, "confirmed": "y"})


@pytest.mark.parametrize(
    "limit, amount, allowed",
    [
        (None, "500.00", True),  # no limit set: staff refund as before roles existed
        (Decimal("100.00"), "100.00", True),
        (Decimal("100.00"), "100.01", False),
        (Decimal("0.00"), "1.00", False),
    ],
)
def test_staff_refund_only_up_to_the_brand_s_limit(app, brand, paid, limit, amount, allowed):
    brand.staff_refund_limit = limit
    db.session.commit()
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    response = refund(signed_in(app, clerk), paid, amount)
    assert response.status_code == (302 if allowed else 403)
    assert reloaded(paid).transaction.amount_refunded == (Decimal(amount) if allowed else 0)
    if not allowed:
        text = response.get_data(as_text=True)
        assert ("at most" in text) if limit else ("cannot record refunds" in text)


def test_the_staff_limit_holds_for_all_of_a_staff_member_s_refunds_of_a_payment(app, brand, paid):
    brand.staff_refund_limit = Decimal("100.00")
    db.session.commit()
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    client = signed_in(app, clerk)

    statuses = [refund(client, paid, "100.00").status_code for _ in range(3)]

    assert statuses == [302, 403, 403]
    assert reloaded(paid).transaction.amount_refunded == Decimal("100.00")
    page = refund(client, paid, "0.01").get_data(as_text=True)
    assert "at most 100.00 of a payment in total" in page
    assert "already refunded 100.00 of this one" in page
    # Another staff member has an allowance of their own; an admin is held to none.
    other = signed_in(app, UserFactory(brand=brand, email="clerk2@shop.test"))
    assert refund(other, paid, "100.00").status_code == 302
    assert refund(signed_in(app, admin_user_of(brand)), paid, "250.00").status_code == 302
    assert reloaded(paid).transaction.amount_refunded == Decimal("450.00")


def admin_user_of(brand):
    """An admin of the brand."""
    return UserFactory(brand=brand, role="admin", email="admin2@shop.test")


def test_an_admin_is_not_held_to_the_staff_limit(app, brand, paid, admin_user):
    brand.staff_refund_limit = Decimal("0.00")
    db.session.commit()
    assert refund(signed_in(app, admin_user), paid, "500.00").status_code == 302
    assert reloaded(paid).transaction.amount_refunded == Decimal("500.00")


def test_a_viewer_may_not_refund_anything(brand):
    viewer = UserFactory(brand=brand, role="viewer")
    viewer.is_authenticated  # noqa: B018 - a signed-in user
    assert not may_refund(viewer, brand, Decimal("0.01"))


def test_the_owner_sets_the_security_policy_and_it_is_audited(app, brand, owner):
    client = signed_in(app, owner)
    response = post_form(
        client,
        "/panel/settings/security",
        {"require_two_factor": "y", "staff_refund_limit": "250.50"},
    )
    assert response.status_code == 302
    assert reloaded(brand).require_two_factor is True
    assert brand.staff_refund_limit == Decimal("250.50")
    assert audit_actions(brand)[-1][:2] == ("settings.security", owner.email)
    response = post_form(client, "/panel/settings/security", {"staff_refund_limit": "-3"})
    assert response.status_code == 422 and reloaded(brand).staff_refund_limit == Decimal("250.50")


OWNER_ONLY_HERE = [
    'action="/panel/payments/{payment}/refund"',
    'action="/panel/customers/{customer}/delete"',
    'href="/panel/customers/{customer}/edit"',
    'href="/panel/devices/add"',  # Add a phone
    'href="/panel/settings"',
    'href="/panel/users"',
]


@pytest.mark.parametrize(
    "role, hidden",
    [
        ("owner", []),
        ("viewer", OWNER_ONLY_HERE),
        ("staff", OWNER_ONLY_HERE[3:]),
    ],
)
def test_pages_hide_what_the_role_cannot_do(app, brand, paid, role, hidden):
    user = UserFactory(brand=brand, role=role, email=f"{role}@shop.test")
    client = signed_in(app, user)
    html = "".join(
        client.get(url).get_data(as_text=True)
        for url in (
            f"/panel/payments/{paid.public_id}",
            "/panel/devices",
            f"/panel/customers/{paid.customer_id}",
        )
    )
    for text in OWNER_ONLY_HERE:
        text = text.format(payment=paid.public_id, customer=paid.customer_id)
        assert (text in html) is (
            text
            not in [h.format(payment=paid.public_id, customer=paid.customer_id) for h in hidden]
        ), text


@pytest.mark.parametrize(
    "limit, shown",
    [(None, None), (Decimal("0.00"), False), (Decimal("100.00"), "at most ৳ 100.00")],
)
def test_the_refund_form_tells_staff_their_limit(app, brand, paid, limit, shown):
    brand.staff_refund_limit = limit
    db.session.commit()
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    html = signed_in(app, clerk).get(f"/panel/payments/{paid.public_id}").get_data(as_text=True)
    form = f'action="/panel/payments/{paid.public_id}/refund"'
    assert (form in html) is (shown is not False)
    if shown:
        assert shown in html
    if shown is None:
        assert "at most" not in html
