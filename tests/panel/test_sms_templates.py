"""The SMS templates page: everyone tests, super-administrators save, switch and delete; CSRF and
brands.
"""

import pytest

from gateway.extensions import db
from gateway.sms.models.sms_template import SmsTemplate
from gateway.sms.templates import create_template
from tests.panel.conftest import audit_actions, post_form, reloaded
from tests.panel.test_sms_inbox import forward

PATTERN = (
    r"Tk (?P<amount>[\d,.]+) reached your wallet from (?P<counterparty>\d+)\. Ref (?P<trx_id>\w+)"
)
SAMPLE = "Dear customer, Tk 1,250.50 reached your wallet from 01712345678. Ref QX77PL12 thanks"


@pytest.fixture
def template(brand):
    return create_template(brand, "bkash", "Wallet notice", PATTERN)


def templates():
    return db.session.execute(db.select(SmsTemplate.name).order_by(SmsTemplate.id)).scalars().all()


def test_staff_see_the_templates_and_the_tester_but_no_form_to_save(as_staff, template):
    html = as_staff.get("/panel/sms-templates").get_data(as_text=True)
    assert "Wallet notice" in html and "Tester" in html
    assert 'action="/panel/sms-templates"' not in html and "/toggle" not in html


def test_the_tester_shows_what_the_pattern_reads_and_fills_the_save_form(as_admin, brand):
    response = post_form(
        as_admin,
        "/panel/sms-templates/test",
        {"provider": "bkash", "pattern": PATTERN, "sample": SAMPLE},
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert (
        "Match." in html
        and "৳ 1,250.50" in html
        and "QX77PL12" in html
        and "counts as an incoming payment" in html
    )
    assert (
        html.count("reached your wallet from (?P&lt;counterparty&gt;") == 2
    )  # the tester and the new-template form
    assert templates() == [] and [action for action, _, _ in audit_actions(brand)] == ["sign_in"]


@pytest.mark.parametrize(
    "data, status, says",
    [
        ({"pattern": "(?P<amount>", "sample": SAMPLE}, 422, "not a valid regular expression"),
        ({"pattern": PATTERN, "sample": ""}, 422, "This field is required."),
        ({"pattern": PATTERN, "sample": "Your OTP is 123456"}, 200, "No match"),
        ({"pattern": PATTERN, "sample": SAMPLE, "sender": "01712345678"}, 200, "stored as ignored"),
    ],
)
def test_the_tester_says_what_is_wrong_or_what_would_happen(as_staff, data, status, says):
    response = post_form(as_staff, "/panel/sms-templates/test", {"provider": "bkash", **data})
    assert response.status_code == status
    assert says in response.get_data(as_text=True)


def test_the_tester_opens_with_a_stored_text_from_the_inbox(as_staff, brand):
    sms = forward(brand, SAMPLE, sender="bKash")
    html = as_staff.get(f"/panel/sms-templates?sms={sms.public_id}").get_data(as_text=True)
    assert "Dear customer, Tk 1,250.50 reached your wallet" in html
    assert '<option selected value="bkash">' in html


def test_a_super_administrator_saves_a_template_and_it_is_audited(as_admin, brand, admin):
    response = post_form(
        as_admin,
        "/panel/sms-templates",
        {"name": "Wallet notice", "provider": "nagad", "pattern": PATTERN},
    )
    assert response.status_code == 302
    saved = db.session.execute(db.select(SmsTemplate)).scalar_one()
    assert (saved.name, saved.provider, saved.pattern, saved.enabled) == (
        "Wallet notice",
        "nagad",
        PATTERN,
        True,
    )
    assert audit_actions(brand)[-1] == ("sms_template.create", admin.email, str(saved.id))


def test_a_bad_pattern_is_refused_on_its_field(as_admin):
    response = post_form(
        as_admin,
        "/panel/sms-templates",
        {"name": "Broken", "provider": "bkash", "pattern": r"Tk (?P<amount>\d+)"},
    )
    assert response.status_code == 422
    assert 'id="pattern-error">SMS template needs the named group(s) trx_id' in response.get_data(
        as_text=True
    )
    assert templates() == []


def test_switching_off_and_deleting_are_audited(as_admin, template, brand, admin):
    assert post_form(as_admin, f"/panel/sms-templates/{template.id}/toggle").status_code == 302
    assert reloaded(template).enabled is False
    assert post_form(as_admin, f"/panel/sms-templates/{template.id}/delete").status_code == 302
    assert templates() == []
    assert [action for action, _, _ in audit_actions(brand)][-2:] == [
        "sms_template.disable",
        "sms_template.delete",
    ]


@pytest.mark.parametrize(
    "url",
    [
        "/panel/sms-templates",
        "/panel/sms-templates/{id}/toggle",
        "/panel/sms-templates/{id}/delete",
    ],
)
def test_staff_cannot_change_templates(as_staff, template, url):
    response = post_form(
        as_staff,
        url.format(id=template.id),
        {"name": "Mine", "provider": "bkash", "pattern": PATTERN},
    )
    assert response.status_code == 403
    assert templates() == ["Wallet notice"] and reloaded(template).enabled


@pytest.mark.parametrize(
    "url",
    [
        "/panel/sms-templates",
        "/panel/sms-templates/test",
        "/panel/sms-templates/{id}/toggle",
        "/panel/sms-templates/{id}/delete",
    ],
)
def test_template_forms_without_the_csrf_token_are_refused(as_admin, template, url):
    response = as_admin.post(
        url.format(id=template.id),
        data={"name": "Mine", "provider": "bkash", "pattern": PATTERN, "sample": SAMPLE},
    )
    assert response.status_code == 400
    assert templates() == ["Wallet notice"] and reloaded(template).enabled


def test_another_brands_template_is_neither_shown_nor_changed(as_admin, other_brand):
    theirs = create_template(other_brand, "bkash", "Their notice", PATTERN)
    assert "Their notice" not in as_admin.get("/panel/sms-templates").get_data(as_text=True)
    assert post_form(as_admin, f"/panel/sms-templates/{theirs.id}/toggle").status_code == 404
    assert post_form(as_admin, f"/panel/sms-templates/{theirs.id}/delete").status_code == 404
    assert reloaded(theirs).enabled
