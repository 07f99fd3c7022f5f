"""Demo receiving numbers: never added in production, marked in the data, and called out wherever
one is on.
"""

import pytest

from gateway.accounts.models.api_key import ApiKey
from gateway.accounts.models.brand import Brand
from gateway.accounts.models.user import User
from gateway.extensions import db
from gateway.payments.methods import add_method, update_method
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import PaymentFactory, PaymentMethodFactory
from tests.panel.conftest import panel_client, sign_in

DEMO_WARNING = "Demo number — do not send real money."
BANNER = "A demo receiving number is switched on."


def methods_in_database():
    """Every stored method as (provider, number, kind, enabled, is_demo)."""
    db.session.expire_all()
    rows = db.session.execute(db.select(PaymentMethod).order_by(PaymentMethod.id)).scalars()
    return [(m.provider, m.number, m.kind, m.enabled, m.is_demo) for m in rows]


def counts():
    return tuple(
        db.session.scalar(db.select(db.func.count()).select_from(model))
        for model in (Brand, User, ApiKey)
    )


@pytest.fixture
def production(app, monkeypatch):
    """The app behaving as APP_ENV=production for the command under test."""
    monkeypatch.setitem(app.config, "APP_ENV", "production")


def bootstrap(runner, *args):
    return runner.invoke(args=["gateway", "bootstrap", *args])


SHOP = ("--brand-name", "Rahim Store")  # production requires the name customers see


def test_bootstrap_in_production_adds_no_demo_number_and_says_what_to_do(runner, production):
    result = bootstrap(runner, *SHOP, "--email", "owner@shop.example")

    assert result.exit_code == 0, result.output
    assert methods_in_database() == []
    assert "none added" in result.output
    assert "flask gateway add-method --provider bkash --number 01XXXXXXXXX" in result.output
    assert "DEMO" not in result.output


def test_bootstrap_in_production_takes_the_real_numbers_given(runner, production):
    result = bootstrap(
        runner,
        *SHOP,
        "--email",
        "owner@shop.example",
        "--bkash",
        "+880 1712-345678",
        "--method",
        "nagad:01812345678:merchant",
        "--method",
        "Rocket:01912345678",
    )

    assert result.exit_code == 0, result.output
    assert methods_in_database() == [
        ("bkash", "01712345678", "personal", True, False),
        ("nagad", "01812345678", "merchant", True, False),
        ("rocket", "01912345678", "personal", True, False),
    ]
    assert "none added" not in result.output


def test_bootstrap_in_production_requires_the_administrators_address(runner, production):
    result = bootstrap(runner, *SHOP, "--bkash", "01712345678")

    assert result.exit_code != 0
    assert "--email" in result.output
    assert counts() == (0, 0, 0) and methods_in_database() == []


def test_bootstrap_in_production_requires_the_shop_name_customers_see(runner, production):
    result = bootstrap(runner, "--email", "owner@shop.example", "--bkash", "01712345678")

    assert result.exit_code != 0
    assert "--brand-name" in result.output
    assert counts() == (0, 0, 0) and methods_in_database() == []


def test_bootstrap_in_production_names_the_brand_as_given(runner, production):
    result = bootstrap(runner, "--brand-name", "  Rahim   Store ", "--email", "owner@shop.example")

    assert result.exit_code == 0, result.output
    assert db.session.execute(db.select(Brand.name)).scalars().all() == ["Rahim Store"]
    assert "Brand:        Rahim Store" in result.output
    assert "Demo Shop" not in result.output


@pytest.mark.parametrize("name", ["   ", "x" * 121])
def test_bootstrap_refuses_a_blank_or_overlong_shop_name_and_writes_nothing(
    runner, production, name
):
    result = bootstrap(runner, "--brand-name", name, "--email", "owner@shop.example")

    assert result.exit_code != 0
    assert "The shop's name must have 1 to 120 characters." in result.output
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize(
    "option, value, message",
    [
        (
            "--bkash",
            "12345",
            "Invalid value for --bkash: '12345': the number must be a Bangladeshi mobile number",
        ),
        ("--method", "paypal:01712345678", "Provider must be one of"),
        ("--method", "nagad:01812345678:boss", "kind must be one of"),
        ("--method", "bkash", "Bangladeshi mobile number"),
        ("--bkash", "01700000000", "is the demo number"),
    ],
)
def test_bootstrap_in_production_refuses_a_bad_number_and_writes_nothing(
    runner, production, option, value, message
):
    result = bootstrap(runner, *SHOP, "--email", "owner@shop.example", option, value)

    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert counts() == (0, 0, 0) and methods_in_database() == []


def test_bootstrap_in_development_adds_the_demo_number_marked_as_demo(runner):
    result = bootstrap(runner)

    assert result.exit_code == 0, result.output
    assert methods_in_database() == [("bkash", "01700000000", "personal", True, True)]
    assert "DEMO number" in result.output


def test_bootstrap_in_development_with_a_number_adds_no_demo_number(runner):
    result = bootstrap(runner, "--bkash", "01712345678")

    assert result.exit_code == 0, result.output
    assert methods_in_database() == [("bkash", "01712345678", "personal", True, False)]


def test_list_methods_marks_an_enabled_demo_number_until_it_is_switched_off(runner):
    bootstrap(runner)
    runner.invoke(args=["gateway", "add-method", "--provider", "bkash", "--number", "01712345678"])
    demo = db.session.execute(
        db.select(PaymentMethod).where(PaymentMethod.is_demo.is_(True))
    ).scalar_one()

    listed = runner.invoke(args=["gateway", "list-methods"]).output

    assert f"#{demo.id} bKash personal 01700000000 (DEMO number: not yours" in listed
    assert "01712345678\n" in listed  # the real number carries no mark
    assert f"WARNING: #{demo.id} is a DEMO number and switched on" in listed
    assert (
        runner.invoke(args=["gateway", "update-method", str(demo.id), "--disable"]).exit_code == 0
    )
    listed = runner.invoke(args=["gateway", "list-methods"]).output
    assert f"#{demo.id} bKash personal 01700000000 (demo, disabled)" in listed
    assert "WARNING" not in listed


@pytest.mark.parametrize("page", ["/panel/dashboard", "/panel/settings"])
def test_panel_pages_warn_while_a_demo_number_is_on(app, brand, page):
    from tests.factories import UserFactory

    admin = UserFactory(brand=brand, role="super_admin", email="owner@shop.test")
    demo = add_method(brand, "bkash", "01700000000", demo=True)
    client = panel_client(app)
    assert sign_in(client, admin).status_code == 302

    shown = client.get(page).get_data(as_text=True)
    assert BANNER in shown and "bKash 01700000000 is a demo number, not yours" in shown

    update_method(demo, enabled=False)
    assert BANNER not in client.get(page).get_data(as_text=True)


def test_panel_dashboard_shows_no_warning_for_real_numbers(app, brand):
    from tests.factories import UserFactory

    staff = UserFactory(brand=brand, role="staff", email="clerk@shop.test")
    add_method(brand, "bkash", "01712345678")
    client = panel_client(app)
    assert sign_in(client, staff).status_code == 302

    page = client.get("/panel/dashboard")
    assert page.status_code == 200 and BANNER not in page.get_data(as_text=True)


def test_checkout_warns_the_customer_beside_a_demo_number_only(client, brand):
    PaymentMethodFactory(brand=brand, provider="bkash", number="01700000000", is_demo=True)
    PaymentMethodFactory(brand=brand, provider="nagad", number="01812345678")
    payment = PaymentFactory(brand=brand)

    page = client.get(f"/checkout/{payment.token}").get_data(as_text=True)

    assert page.count(DEMO_WARNING) == 2  # at the top of the page and beside the number itself
    assert "bKash 01700000000 is a sample number" in page
    assert "01812345678 is a sample number" not in page


def test_upgrading_an_older_install_marks_its_bootstrap_demo_number(tmp_path, monkeypatch):
    import logging.config

    from flask_migrate import upgrade
    from sqlalchemy import text

    from gateway import create_app
    from tests.test_migrations import MIGRATIONS

    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)
    old = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'old.sqlite3'}",
            "REDIS_URL": None,
            "SQLALCHEMY_ENGINE_OPTIONS": {},
        }
    )
    with old.app_context():
        try:
            upgrade(directory=MIGRATIONS, revision="0001")
            with db.engine.begin() as connection:
                connection.execute(
                    text(
                        "INSERT INTO brands (id, name, slug, primary_color, timezone, "
                        "currencies, webhook_secret, "
                        "receipt_sms_enabled, created_at) VALUES (1, 'Shop', 'default', "
                        "'#0f766e', 'Asia/Dhaka', 'BDT', "  # noqa: E501
                        "'whsec_x', 0, '2026-01-01 00:00:00')"
                    )
                )
                for number in ("01700000000", "01712345678"):
                    connection.execute(
                        text(
                            "INSERT INTO payment_methods (brand_id, provider, number, "
                            "kind, ask_sender_number, enabled, "  # noqa: E501
                            "position, created_at) VALUES (1, 'bkash', :number, "
                            "'personal', 0, 1, 0, '2026-01-01')"
                        ),
                        {"number": number},
                    )
            upgrade(directory=MIGRATIONS)
            with db.engine.connect() as connection:
                marked = connection.execute(
                    text("SELECT number, is_demo FROM payment_methods ORDER BY number")
                ).all()
        finally:
            db.session.remove()
            db.engine.dispose()

    assert [(number, bool(flag)) for number, flag in marked] == [
        ("01700000000", True),
        ("01712345678", False),
    ]
