"""Two-factor sign-in: enrolling with a QR code, the code step after the password, recovery codes,
limits, policy.
"""

import re
from datetime import timedelta

import pyotp
import pytest
from cryptography.exceptions import InvalidTag
from freezegun import freeze_time

from gateway import create_app
from gateway.accounts.models.audit import AuditLog
from gateway.accounts.models.user import RecoveryCode
from gateway.accounts.two_factor import (
    confirm_enrolment,
    open_totp_secret,
    start_enrolment,
    verify_second_factor,
)
from gateway.clock import utcnow
from gateway.extensions import db
from tests.factories import UserFactory
from tests.limited_apps import limited_app as rate_limited
from tests.panel.conftest import PASSWORD, csrf_token, panel_client, post_form, reloaded, sign_in

SECRET_ON_PAGE = re.compile(r'id="totp-secret"[^>]*>([A-Z2-7]+)</code>')
RECOVERY_ON_PAGE = re.compile(r"<li><code>([a-z2-9]{4}(?:-[a-z2-9]{4}){3})</code></li>")
CODE_STEP = "/panel/sign-in/two-factor"


@pytest.fixture
def owner(brand):
    return UserFactory(brand=brand, role="owner", email="owner@shop.test")


def enrolled(user):
    """Turn two-factor on through the service, as if a minute ago; returns (secret, recovery
    codes)."""
    with freeze_time(utcnow() - timedelta(minutes=1)):
        secret = start_enrolment(user)
        codes = confirm_enrolment(user, pyotp.TOTP(secret).now())
    return secret, codes


def give_code(client, code):
    """Post a code to the sign-in's second step."""
    token = csrf_token(client, CODE_STEP)
    return client.post(CODE_STEP, data={"code": code, "csrf_token": token})


def audited(brand):
    """(action, details) of the brand's audit log, oldest first."""
    return [
        (entry.action, entry.details)
        for entry in db.session.execute(
            db.select(AuditLog).where(AuditLog.brand_id == brand.id).order_by(AuditLog.id)
        ).scalars()
    ]


def test_enrolment_shows_an_inline_qr_and_turns_on_with_a_first_code(app, brand, owner):
    client = panel_client(app)
    sign_in(client, owner)
    page = post_form(client, "/panel/account/two-factor/enrol").get_data(as_text=True)
    assert '<img src="data:image/svg+xml' in page
    assert not re.search(r"""(?:src|href)=["'](?:https?:)?//""", page)
    secret = SECRET_ON_PAGE.search(page).group(1)
    assert pyotp.TOTP(secret).provisioning_uri(owner.email, issuer_name="Test Shop")

    wrong = post_form(client, "/panel/account/two-factor/confirm", {"code": "000000"})
    assert wrong.status_code == 422 and "The code is not correct" in wrong.get_data(as_text=True)
    assert reloaded(owner).two_factor_enabled is False

    right = post_form(
        client, "/panel/account/two-factor/confirm", {"code": pyotp.TOTP(secret).now()}
    )
    codes = RECOVERY_ON_PAGE.findall(right.get_data(as_text=True))
    assert right.status_code == 200 and len(set(codes)) == 10
    assert reloaded(owner).two_factor_enabled is True
    assert ("two_factor.enable", None) in audited(brand)

    # The secret is sealed at rest, the codes hashed, and neither is shown again.
    assert secret not in owner.totp_secret_sealed
    stored = db.session.execute(db.select(RecoveryCode.code_hash)).scalars().all()
    assert len(stored) == 10 and not set(stored) & {code.replace("-", "") for code in codes}
    again = client.get("/panel/account/two-factor").get_data(as_text=True)
    assert secret not in again and codes[0] not in again and "10 recovery codes left" in again


def test_the_sealed_secret_opens_only_for_its_own_user(brand, owner):
    secret, _ = enrolled(owner)
    assert open_totp_secret(owner.totp_secret_sealed, owner.id).decode() == secret
    with pytest.raises(InvalidTag):
        open_totp_secret(owner.totp_secret_sealed, owner.id + 1)


def test_sign_in_asks_for_the_code_and_signs_in_only_after_it(app, brand, owner):
    secret, _ = enrolled(owner)
    client = panel_client(app)
    response = sign_in(client, owner)
    assert response.status_code == 302 and response.headers["Location"] == CODE_STEP
    # Not signed in yet: every other address sends the visitor back to sign in.
    for url in ("/panel/dashboard", "/panel/account/two-factor", "/panel/users"):
        assert "/panel/sign-in" in client.get(url).headers["Location"], url
    response = give_code(client, pyotp.TOTP(secret).now())
    assert response.status_code == 302 and response.headers["Location"] == "/panel/dashboard"
    assert client.get("/panel/dashboard").status_code == 200
    assert audited(brand)[-1] == ("sign_in", {"second_factor": "totp"})


def test_the_code_step_keeps_the_page_asked_for(app, owner):
    secret, _ = enrolled(owner)
    client = panel_client(app)
    token = csrf_token(client, "/panel/sign-in")
    client.post(
        "/panel/sign-in?next=/panel/refunds",
        data={"email": owner.email, "password": PASSWORD, "csrf_token": token},
    )
    assert give_code(client, pyotp.TOTP(secret).now()).headers["Location"] == "/panel/refunds"


def test_a_wrong_code_is_refused_and_audited(app, brand, owner):
    enrolled(owner)
    client = panel_client(app)
    sign_in(client, owner)
    response = give_code(client, "123456")
    assert response.status_code == 200
    assert "The code is not correct, or was used already." in response.get_data(as_text=True)
    assert client.get("/panel/dashboard").status_code == 302
    assert audited(brand)[-1][0] == "sign_in.two_factor_failed"


def test_a_code_is_not_accepted_twice(app, owner):
    secret, _ = enrolled(owner)
    code = pyotp.TOTP(secret).now()
    first = panel_client(app)
    sign_in(first, owner)
    assert give_code(first, code).status_code == 302
    second = panel_client(app)
    sign_in(second, owner)
    assert give_code(second, code).status_code == 200
    assert second.get("/panel/dashboard").status_code == 302


def test_a_code_from_an_older_step_than_the_last_used_is_refused(owner):
    secret, _ = enrolled(owner)
    totp = pyotp.TOTP(secret)
    assert verify_second_factor(owner, totp.now()) == "totp"
    db.session.commit()
    previous = totp.at(utcnow() - timedelta(seconds=30))
    assert verify_second_factor(reloaded(owner), previous) is None


def test_a_recovery_code_signs_in_once(app, brand, owner):
    _, codes = enrolled(owner)
    client = panel_client(app)
    sign_in(client, owner)
    assert give_code(client, codes[3].upper()).status_code == 302
    assert audited(brand)[-1] == ("sign_in", {"second_factor": "recovery"})
    again = panel_client(app)
    sign_in(again, owner)
    assert give_code(again, codes[3]).status_code == 200
    page = client.get("/panel/account/two-factor").get_data(as_text=True)
    assert "9 recovery codes left" in page


def test_the_code_step_expires_after_five_minutes(app, owner):
    secret, _ = enrolled(owner)
    client = panel_client(app)
    sign_in(client, owner)
    with freeze_time(utcnow() + timedelta(minutes=6)):
        page = client.get(CODE_STEP)
        assert "Sign in again" in page.get_data(as_text=True)
    assert client.get("/panel/dashboard").status_code == 302


def test_the_code_step_without_a_password_first_sends_back_to_sign_in(app, owner):
    enrolled(owner)
    page = panel_client(app).get(CODE_STEP).get_data(as_text=True)
    assert 'name="password"' in page and 'name="code"' not in page


def test_disabling_needs_the_password_and_a_code(app, brand, owner):
    secret, codes = enrolled(owner)
    client = panel_client(app)
    sign_in(client, owner)
    give_code(client, codes[0])
    url = "/panel/account/two-factor/disable"
    wrong = post_form(client, url, {"password": "not it", "code": pyotp.TOTP(secret).now()})
    assert wrong.status_code == 422 and "The password is not correct." in wrong.get_data(True)
    assert reloaded(owner).two_factor_enabled
    wrong = post_form(client, url, {"password": PASSWORD, "code": "000000"})
    assert wrong.status_code == 422 and reloaded(owner).two_factor_enabled
    right = post_form(client, url, {"password": PASSWORD, "code": codes[1]})
    assert right.status_code == 200 and "Two-factor sign-in is off." in right.get_data(True)
    assert reloaded(owner).two_factor_enabled is False and owner.totp_secret_sealed is None
    assert db.session.execute(db.select(RecoveryCode)).first() is None
    assert audited(brand)[-1][0] == "two_factor.disable"
    assert sign_in(panel_client(app), owner).headers["Location"] == "/panel/dashboard"


def test_new_recovery_codes_replace_the_old_ones(app, owner):
    _, codes = enrolled(owner)
    client = panel_client(app)
    sign_in(client, owner)
    give_code(client, codes[0])
    page = post_form(
        client, "/panel/account/two-factor/recovery-codes", {"password": PASSWORD, "code": codes[1]}
    ).get_data(as_text=True)
    fresh = RECOVERY_ON_PAGE.findall(page)
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    assert verify_second_factor(reloaded(owner), codes[2]) is None
    assert verify_second_factor(owner, fresh[0]) == "recovery"


@pytest.fixture
def limited_app(app):
    """The same database behind an app enforcing TWO_FACTOR_RATE_LIMIT=3/minute (see
    test_auth.py)."""
    with rate_limited(app, TWO_FACTOR_RATE_LIMIT="3/minute") as limited:
        yield limited


def right_code_after_wrong_ones(served, owner, secret, wrong):
    """`wrong` wrong codes, each from a fresh browser after the right password, then the right code
    from another: (that browser, the answer to the right code)."""
    for _ in range(wrong):
        client = panel_client(served)
        sign_in(client, owner)
        assert give_code(client, "000000").status_code == 200
    client = panel_client(served)
    sign_in(client, owner)
    return client, give_code(client, pyotp.TOTP(secret).now())


def test_wrong_codes_are_limited_per_user_whatever_the_browser(limited_app, owner):
    secret, _ = enrolled(owner)
    client, blocked = right_code_after_wrong_ones(limited_app, owner, secret, 3)
    assert blocked.status_code == 429 and "Retry-After" in blocked.headers
    assert client.get("/panel/dashboard").status_code == 302


def test_wrong_codes_meet_the_day_s_cap_after_the_minute_s_room(app, owner):
    """The minute's window has room, the day's has not: the code step waits for the day's end."""
    secret, _ = enrolled(owner)
    with rate_limited(app, TWO_FACTOR_RATE_LIMIT="10/minute;30/hour;2/day") as limited:
        client, blocked = right_code_after_wrong_ones(limited, owner, secret, 2)
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 3600
    assert client.get("/panel/dashboard").status_code == 302


@pytest.fixture
def production(app, monkeypatch):
    """The policy applies in production only."""
    monkeypatch.setitem(app.config, "APP_ENV", "production")


@pytest.mark.parametrize("role, held", [("owner", True), ("admin", True), ("staff", False)])
def test_the_brand_s_policy_makes_owners_and_admins_enrol_first(app, brand, production, role, held):
    brand.require_two_factor = True
    db.session.commit()
    user = UserFactory(brand=brand, role=role, email=f"{role}@shop.test")
    client = panel_client(app)
    sign_in(client, user)
    response = client.get("/panel/payments")
    if held:
        assert response.status_code == 302
        assert response.headers["Location"] == "/panel/account/two-factor"
        assert client.get("/panel/account/two-factor").status_code == 200
    else:
        assert response.status_code == 200


def test_the_policy_lets_an_enrolled_owner_in(app, brand, production, owner):
    brand.require_two_factor = True
    db.session.commit()
    secret, _ = enrolled(owner)
    client = panel_client(app)
    sign_in(client, owner)
    give_code(client, pyotp.TOTP(secret).now())
    assert client.get("/panel/payments").status_code == 200


def test_the_policy_is_not_enforced_outside_production(app, brand, owner):
    brand.require_two_factor = True
    db.session.commit()
    client = panel_client(app)
    sign_in(client, owner)
    assert client.get("/panel/payments").status_code == 200


def test_the_operator_resets_two_factor_for_a_user_who_lost_everything(app, runner, owner):
    enrolled(owner)
    browser = panel_client(app)
    sign_in(browser, owner)
    result = runner.invoke(args=["gateway", "reset-two-factor", "--email", "OWNER@shop.test"])
    assert result.exit_code == 0, result.output
    assert reloaded(owner).two_factor_enabled is False
    assert db.session.execute(db.select(RecoveryCode)).first() is None
    assert sign_in(panel_client(app), owner).headers["Location"] == "/panel/dashboard"
    again = runner.invoke(args=["gateway", "reset-two-factor", "--email", "owner@shop.test"])
    assert again.exit_code != 0 and "no two-factor sign-in to reset" in again.output
    unknown = runner.invoke(args=["gateway", "reset-two-factor", "--email", "who@shop.test"])
    assert unknown.exit_code != 0 and "No panel user" in unknown.output
