"""The audit log page: every change with who, what, when and from where, one brand's entries
only."""

from freezegun import freeze_time

from gateway.accounts.models.audit import AuditLog
from gateway.extensions import db
from tests.factories import PaymentFactory
from tests.panel.conftest import post_form


def test_entries_show_who_what_when_and_from_where_newest_first(as_admin, brand, admin):
    payment = PaymentFactory(brand=brand)
    post_form(as_admin, f"/panel/payments/{payment.public_id}/cancel")
    html = as_admin.get("/panel/audit-log").get_data(as_text=True)
    rows = html.split("<tbody>")[1]
    assert rows.index("Payment cancelled") < rows.index("Signed in")
    assert admin.email in rows and "127.0.0.1" in rows
    assert f'href="/panel/payments/{payment.public_id}"' in rows


def test_changes_are_shown_as_old_and_new_values(as_admin, brand):
    post_form(
        as_admin,
        "/panel/settings",
        {
            "name": "Renamed",
            "primary_color": brand.primary_color,
            "timezone": "Asia/Dhaka",
            "currencies": "BDT,USD",
        },
    )
    assert "<strong>Name</strong>: Test Shop → Renamed" in as_admin.get(
        "/panel/audit-log"
    ).get_data(as_text=True)


def test_times_are_in_the_brand_s_zone(as_admin, brand, admin):
    with freeze_time("2024-05-01 18:30:05"):
        db.session.add(
            AuditLog(
                brand_id=brand.id,
                user_id=admin.id,
                user_email=admin.email,
                action="settings.update",
            )
        )
        db.session.commit()
    assert "2 May 2024, 00:30:05" in as_admin.get("/panel/audit-log").get_data(as_text=True)


def test_the_log_filters_by_action(as_admin, brand, admin):
    db.session.add(
        AuditLog(
            brand_id=brand.id,
            user_email=admin.email,
            action="user.invite",
            target_type="user",
            target_id="new@shop.test",
        )
    )
    db.session.commit()
    html = (
        as_admin.get("/panel/audit-log?action=user.invite")
        .get_data(as_text=True)
        .split("<tbody>")[1]
    )
    assert "new@shop.test" in html and "sign_in" not in html


def test_another_brand_s_entries_are_never_shown(as_admin, other_brand):
    db.session.add(
        AuditLog(brand_id=other_brand.id, user_email="spy@other.test", action="settings.update")
    )
    db.session.commit()
    assert "spy@other.test" not in as_admin.get("/panel/audit-log").get_data(as_text=True)
