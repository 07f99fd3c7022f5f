"""Panel users without HTTP: sign-in checks, invitations, deactivation and password changes."""

import pytest

from gateway.accounts.models.user import User
from gateway.accounts.users import (
    authenticate,
    change_password,
    get_user,
    invite_user,
    set_user_active,
)
from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from tests.factories import UserFactory

PASSWORD = "correct horse battery"


def test_authenticate_accepts_the_right_password_in_any_case_of_e_mail(brand):
    user = UserFactory(brand=brand, email="owner@shop.test")
    assert authenticate(" OWNER@shop.test", PASSWORD) == user
    assert user.last_login_at is not None


@pytest.mark.parametrize(
    "email, password", [("owner@shop.test", "wrong"), ("nobody@shop.test", PASSWORD), ("", "")]
)
def test_authenticate_refuses_wrong_credentials(brand, email, password):
    UserFactory(brand=brand, email="owner@shop.test")
    assert authenticate(email, password) is None


def test_authenticate_refuses_a_deactivated_user(brand):
    UserFactory(brand=brand, email="gone@shop.test", active=False)
    assert authenticate("gone@shop.test", PASSWORD) is None


def test_an_invitation_creates_a_user_whose_temporary_password_works(brand):
    user, password = invite_user(brand, "New@Shop.test", "New", "staff")
    assert (user.email, user.role, user.brand_id) == ("new@shop.test", "staff", brand.id)
    assert len(password) >= 16 and user.check_password(password)
    assert password not in user.password_hash


@pytest.mark.parametrize(
    "email, role, field",
    [
        ("nope", "staff", "email"),
        ("a@shop.test", "emperor", "role"),
        ("a" * 250 + "@x.io", "staff", "email"),
    ],
)
def test_an_invitation_with_a_bad_field_names_it(brand, email, role, field):
    with pytest.raises(DomainError) as refused:
        invite_user(brand, email, role=role)
    assert (http_status(refused.value), refused.value.errors[0]["field"]) == (422, field)
    assert db.session.execute(db.select(User)).first() is None


def test_an_e_mail_is_one_user_across_brands(brand, other_brand):
    UserFactory(brand=other_brand, email="taken@shop.test")
    with pytest.raises(DomainError) as refused:
        invite_user(brand, "TAKEN@shop.test")
    assert (http_status(refused.value), refused.value.code) == (409, "USER_EXISTS")


def test_deactivation_is_a_guarded_change_that_cannot_repeat(brand):
    admin, clerk = UserFactory(brand=brand, role="super_admin"), UserFactory(brand=brand)
    set_user_active(clerk, False, admin)
    assert clerk.active is False
    with pytest.raises(DomainError) as refused:
        set_user_active(clerk, False, admin)
    assert refused.value.code == "INVALID_STATE"


def test_nobody_deactivates_themselves(brand):
    admin = UserFactory(brand=brand, role="super_admin")
    with pytest.raises(DomainError):
        set_user_active(admin, False, admin)
    assert db.session.get(User, admin.id).active is True


def test_get_user_sees_only_the_brand_s_users(brand, other_brand):
    outsider = UserFactory(brand=other_brand)
    with pytest.raises(DomainError) as refused:
        get_user(brand, outsider.id)
    assert http_status(refused.value) == 404


def test_a_password_change_needs_the_current_password_and_a_long_new_one(brand):
    user = UserFactory(brand=brand)
    for current, new, field in [
        ("wrong", "long enough pass", "current_password"),
        (PASSWORD, "short", "new_password"),
    ]:
        with pytest.raises(DomainError) as refused:
            change_password(user, current, new)
        assert refused.value.errors[0]["field"] == field
    change_password(user, PASSWORD, "long enough pass")
    assert user.check_password("long enough pass") and not user.check_password(PASSWORD)
