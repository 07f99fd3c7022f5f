"""Settings: the brand's name, look, currencies, zone and lifetime, and its receiving numbers."""

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import PaymentMethodFactory
from tests.panel.conftest import audit_actions, post_form, reloaded

VALID = {
    "name": "Dhaka Crafts",
    "logo_url": "https://cdn.example/logo.png",
    "primary_color": "#1D4ED8",
    "base_url": "https://pay.example.com/",
    "timezone": "Asia/Kolkata",
    "currencies": "bdt, usd",
    "payment_ttl_minutes": "45",
    "receipt_sms_enabled": "y",
}


def test_saving_settings_changes_the_brand_and_logs_old_and_new_values(as_admin, brand, admin):
    response = post_form(as_admin, "/panel/settings", VALID)
    assert response.status_code == 302
    reloaded(brand)
    assert (brand.name, brand.logo_url, brand.primary_color, brand.base_url) == (
        "Dhaka Crafts",
        "https://cdn.example/logo.png",
        "#1d4ed8",
        "https://pay.example.com",
    )
    assert (brand.timezone, brand.currencies, brand.payment_ttl, brand.receipt_sms_enabled) == (
        "Asia/Kolkata",
        "BDT,USD",
        45 * 60,
        True,
    )
    entry = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "settings.update")
    ).scalar_one()
    assert entry.user_id == admin.id and entry.details["name"] == ["Test Shop", "Dhaka Crafts"]
    assert entry.details["payment_ttl"] == [None, 2700]


def test_the_form_shows_the_brand_as_it_is(as_admin, brand):
    brand.payment_ttl = 600
    db.session.commit()
    html = as_admin.get("/panel/settings").get_data(as_text=True)
    assert 'value="Test Shop"' in html and 'value="10"' in html and 'value="BDT,USD"' in html


def test_saving_unchanged_settings_logs_nothing(as_admin, brand):
    post_form(
        as_admin,
        "/panel/settings",
        {
            "name": "Test Shop",
            "primary_color": brand.primary_color,
            "timezone": brand.timezone,
            "currencies": "BDT,USD",
        },
    )
    assert [action for action, _, _ in audit_actions(brand)] == ["sign_in"]


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("primary_color", "teal", "Use a colour such as #0f766e."),
        ("timezone", "Mars/Olympus", "Use a time zone name such as Asia/Dhaka."),
        ("currencies", "BDT, TAKA", "TAKA is not a three-letter currency code."),
        ("base_url", "pay.example.com", "Enter an absolute http:// or https:// address."),
        ("logo_url", "javascript:alert(1)", "Enter an absolute http:// or https:// address."),
        ("payment_ttl_minutes", "0", "Number must be between 1 and 1440."),
    ],
)
def test_invalid_settings_are_refused_beside_the_field_and_nothing_changes(
    as_admin, brand, field, value, message
):
    response = post_form(as_admin, "/panel/settings", {**VALID, field: value})
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert message in html and f'id="{field}-error"' in html
    assert reloaded(brand).name == "Test Shop" and brand.timezone == "Asia/Dhaka"


def test_adding_a_receiving_number(as_admin, brand, admin):
    response = post_form(
        as_admin,
        "/panel/settings/methods",
        {
            "provider": "nagad",
            "number": "+880 1811-223344",
            "kind": "merchant",
            "instructions": "Use Payment",
            "ask_sender_number": "y",
        },
        follow_redirects=True,
    )
    assert "Nagad 01811223344 added." in response.get_data(as_text=True)
    method = db.session.execute(db.select(PaymentMethod)).scalar_one()
    assert (
        method.brand_id,
        method.provider,
        method.number,
        method.kind,
        method.ask_sender_number,
    ) == (brand.id, "nagad", "01811223344", "merchant", True)
    assert audit_actions(brand)[-1] == ("payment_method.add", admin.email, str(method.id))


def test_a_number_that_is_not_a_mobile_number_is_refused(as_admin):
    response = post_form(
        as_admin,
        "/panel/settings/methods",
        {"provider": "bkash", "number": "12345", "kind": "personal"},
    )
    assert response.status_code == 422
    assert "Number must be a Bangladeshi mobile number" in response.get_data(as_text=True)
    assert db.session.execute(db.select(PaymentMethod)).first() is None


def test_the_same_number_twice_is_refused(as_admin, brand):
    PaymentMethodFactory(brand=brand, provider="bkash", number="01711223344")
    response = post_form(
        as_admin,
        "/panel/settings/methods",
        {"provider": "bkash", "number": "01711223344", "kind": "personal"},
    )
    assert response.status_code == 409 and "is already a payment method" in response.get_data(
        as_text=True
    )


def test_switching_a_number_off_and_on(as_admin, brand, admin):
    method = PaymentMethodFactory(brand=brand, number="01711223344")
    post_form(as_admin, f"/panel/settings/methods/{method.id}/toggle")
    assert reloaded(method).enabled is False
    post_form(as_admin, f"/panel/settings/methods/{method.id}/toggle")
    assert reloaded(method).enabled is True
    assert [action for action, _, _ in audit_actions(brand)][-2:] == [
        "payment_method.disable",
        "payment_method.enable",
    ]


def test_another_brand_s_number_cannot_be_switched(as_admin, other_brand):
    theirs = PaymentMethodFactory(brand=other_brand)
    assert post_form(as_admin, f"/panel/settings/methods/{theirs.id}/toggle").status_code == 404
    assert reloaded(theirs).enabled is True


def test_the_settings_page_lists_only_the_brand_s_numbers(as_admin, brand, other_brand):
    PaymentMethodFactory(brand=brand, number="01711111111")
    PaymentMethodFactory(brand=other_brand, number="01799999999")
    html = as_admin.get("/panel/settings").get_data(as_text=True)
    assert "01711111111" in html and "01799999999" not in html
