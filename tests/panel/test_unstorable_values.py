"""Values no column can take (a NUL character, a lone surrogate) in the panel: a path argument is
404, a form's value is its own field's error, a list's filter is ignored; never a 500 (PostgreSQL
refuses NUL in text) and never a row written with one (SQLite would store it)."""

import importlib
import pkgutil

import pytest
import wtforms

import gateway.panel
from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.user import User
from gateway.extensions import db
from gateway.panel.forms import RefusesUnstorableValues
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import UserFactory
from tests.fresh_catalogue import app_with_fresh_catalogue, dispose
from tests.panel.conftest import csrf_token, panel_client, post_form, reloaded, sign_in


def count(model):
    return db.session.execute(db.select(db.func.count()).select_from(model)).scalar()


@pytest.mark.parametrize(
    "path",
    [
        "/panel/payments/%00",
        "/panel/payments/%00/proof",
        "/panel/invoices/%00",
        "/panel/invoices/%00/edit",
        "/panel/invoices/%00/pdf",
        "/panel/links/%00",
        "/panel/links/%00/edit",
        "/panel/counter/%00",
        "/panel/counter/%00/receipt",
        "/panel/counter/%00/status",
        "/panel/devices/%00/status",
        "/panel/customers/a%00",
        "/panel/sms-inbox/1%00",
    ],
)
def test_a_nul_in_a_panel_path_is_404(as_admin, path):
    assert as_admin.get(path).status_code == 404


def test_a_nul_in_a_settings_value_is_the_field_s_error(as_admin, brand):
    response = post_form(
        as_admin,
        "/panel/settings",
        {
            "name": "Shop\x00",
            "primary_color": "#1d4ed8",
            "timezone": "Asia/Dhaka",
            "currencies": "BDT",
        },
    )

    assert response.status_code == 422 and 'id="name-error"' in response.get_data(as_text=True)
    assert reloaded(brand).name == "Test Shop"


def test_the_refusal_speaks_bangla(app, brand, admin, tmp_path):
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        client = panel_client(bangla)
        sign_in(client, admin)
        client.get("/panel/settings?lang=bn")
        page = post_form(
            client,
            "/panel/settings",
            {"name": "Shop\x00", "primary_color": "#1d4ed8", "timezone": "Asia/Dhaka"},
        ).get_data(as_text=True)
    finally:
        dispose(bangla)
    assert "NUL অক্ষর" in page and "Must not contain" not in page


@pytest.mark.parametrize(
    "url, data, field, model",
    [
        (
            "/panel/users",
            {"email": "new@shop.test", "name": "n\x00", "role": "staff"},
            "name",
            User,
        ),
        ("/panel/developers/api-keys", {"label": "k\x00", "scopes": ["read"]}, "label", ApiKey),
        (
            "/panel/settings/methods",
            {
                "provider": "nagad",
                "number": "01811111111",
                "kind": "personal",
                "instructions": "x\x00",
            },
            "instructions",
            PaymentMethod,
        ),
    ],
    ids=["invite", "api key", "receiving number"],
)
def test_a_nul_in_a_panel_form_is_the_field_s_error_and_adds_no_row(
    as_admin, url, data, field, model
):
    before = count(model)

    response = post_form(as_admin, url, data)

    assert response.status_code == 422
    assert f'id="{field}-error"' in response.get_data(as_text=True)
    assert count(model) == before


def test_a_nul_in_the_sign_in_e_mail_is_the_field_s_error_and_signs_nobody_in(client, brand):
    UserFactory(brand=brand, email="a@example.com")
    response = client.post(
        "/panel/sign-in",
        data={
            "email": "a\x00@example.com",
            "password": "x",
            "csrf_token": csrf_token(client, "/panel/sign-in"),
        },
    )

    assert response.status_code == 200 and 'id="email-error"' in response.get_data(as_text=True)
    assert client.get("/panel/dashboard").status_code == 302


@pytest.mark.parametrize(
    "path",
    [
        "/panel/payments?q=a%00b",
        "/panel/customers?q=a%00b",
        "/panel/sms-inbox?q=a%00b",
        "/panel/invoices?q=%00",
        "/panel/refunds?trx_id=%00",
        "/panel/audit-log?action=%00",
    ],
)
def test_a_nul_in_a_list_filter_is_ignored_not_a_500(as_admin, path):
    assert as_admin.get(path).status_code == 200


def test_every_panel_form_refuses_values_no_column_can_take():
    """A form added later takes the rule by its base class (PanelForm, QueryForm) or fails here."""
    for module in pkgutil.iter_modules(gateway.panel.__path__):
        importlib.import_module(f"gateway.panel.{module.name}")
    forms, stack = [], [wtforms.Form]
    while stack:
        for subclass in stack.pop().__subclasses__():
            stack.append(subclass)
            if subclass.__module__.startswith("gateway.panel."):
                forms.append(subclass)
    assert len(forms) > 30
    assert [form for form in forms if not issubclass(form, RefusesUnstorableValues)] == []
