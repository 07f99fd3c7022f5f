"""Users: inviting with a one-time password, deactivating (signed out at once) and reactivating."""

import re

import pytest

from gateway.accounts.models.user import User
from gateway.extensions import db
from tests.factories import UserFactory
from tests.panel.conftest import audit_actions, panel_client, post_form, reloaded, sign_in


def test_the_page_lists_the_brand_s_users_only(as_admin, brand, other_brand):
    UserFactory(brand=brand, email="clerk@shop.test")
    UserFactory(brand=other_brand, email="outsider@other.test")
    html = as_admin.get("/panel/users").get_data(as_text=True)
    assert "clerk@shop.test" in html and "outsider@other.test" not in html


def test_an_invited_user_gets_a_temporary_password_shown_once_that_signs_in(
    app, as_admin, brand, admin
):
    response = post_form(
        as_admin,
        "/panel/users",
        {"email": "New.Clerk@Shop.test", "name": "New Clerk", "role": "staff"},
    )
    assert response.status_code == 200
    password = re.search(
        r'<code id="temporary-password">([^<]+)</code>', response.get_data(as_text=True)
    ).group(1)
    user = db.session.execute(
        db.select(User).where(User.email == "new.clerk@shop.test")
    ).scalar_one()
    assert (user.brand_id, user.role, user.active, user.name) == (
        brand.id,
        "staff",
        True,
        "New Clerk",
    )
    assert password not in as_admin.get("/panel/users").get_data(as_text=True)
    assert audit_actions(brand)[-1] == ("user.invite", admin.email, "new.clerk@shop.test")
    newcomer = panel_client(app)
    assert sign_in(newcomer, user, password).status_code == 302
    assert newcomer.get("/panel/settings").status_code == 403


def test_an_e_mail_already_in_use_is_refused(as_admin, brand, other_brand):
    UserFactory(brand=other_brand, email="taken@shop.test")
    response = post_form(as_admin, "/panel/users", {"email": "taken@shop.test", "role": "staff"})
    assert (
        response.status_code == 409
        and "A user with this e-mail already exists." in response.get_data(as_text=True)
    )


@pytest.mark.parametrize(
    "data, message",
    [
        ({"email": "not-an-address", "role": "staff"}, "Enter a valid e-mail address."),
        ({"email": "x@shop.test", "role": "emperor"}, "Not a valid choice"),
    ],
)
def test_an_invitation_with_bad_fields_creates_nobody(as_admin, data, message):
    response = post_form(as_admin, "/panel/users", data)
    assert response.status_code == 422 and message in response.get_data(as_text=True)
    assert db.session.execute(db.select(db.func.count()).select_from(User)).scalar() == 1


def test_a_deactivated_user_is_signed_out_on_their_next_request(app, as_admin, brand, admin):
    clerk = UserFactory(brand=brand, email="clerk@shop.test")
    clerks_browser = panel_client(app)
    sign_in(clerks_browser, clerk)
    assert clerks_browser.get("/panel/payments").status_code == 200
    post_form(as_admin, f"/panel/users/{clerk.id}/deactivate")
    assert reloaded(clerk).active is False
    assert clerks_browser.get("/panel/payments").status_code == 302
    assert sign_in(panel_client(app), clerk).status_code == 200
    assert audit_actions(brand)[-2][:2] == ("user.deactivate", admin.email)


def test_a_reactivated_user_can_sign_in_again(app, as_admin, brand):
    clerk = UserFactory(brand=brand, email="clerk@shop.test", active=False)
    post_form(as_admin, f"/panel/users/{clerk.id}/reactivate")
    assert reloaded(clerk).active is True
    assert sign_in(panel_client(app), clerk).status_code == 302


def test_a_super_administrator_cannot_deactivate_themselves(as_admin, admin):
    response = post_form(as_admin, f"/panel/users/{admin.id}/deactivate", follow_redirects=True)
    assert "You cannot deactivate or reactivate yourself." in response.get_data(as_text=True)
    assert reloaded(admin).active is True


def test_another_brand_s_user_cannot_be_deactivated(as_admin, other_brand):
    outsider = UserFactory(brand=other_brand)
    assert post_form(as_admin, f"/panel/users/{outsider.id}/deactivate").status_code == 404
    assert reloaded(outsider).active is True
