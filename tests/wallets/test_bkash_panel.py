"""The panel's wallet API method: added with its credentials sealed and shown only by their last
characters; the "test the credentials" button says what bKash answered, audited; the command line
adds the same."""

import html
import json

from gateway.extensions import db
from gateway.payments.models.payment_method import PaymentMethod
from gateway.wallets.credentials import opened
from gateway.wallets.models import WalletCredential
from tests.checkout_helpers import payment  # noqa: F401 - fixture
from tests.panel.conftest import admin, as_admin, audit_actions, client, post_form  # noqa: F401
from tests.wallet_standins.bkash import CREDENTIALS
from tests.wallets.bkash_support import bkash_api, standin  # noqa: F401 - fixtures

SECRET = "app-secret-that-must-not-show-Z9Q1"


def wallet_form(base_url, **changes):
    fields = {
        "wallet-provider": "bkash",
        "wallet-base_url": base_url,
        "wallet-app_key": CREDENTIALS["app_key"],
        "wallet-app_secret": CREDENTIALS["app_secret"],
        "wallet-username": CREDENTIALS["username"],
        "wallet-password": CREDENTIALS["password"],
    }
    fields.update({f"wallet-{name}": value for name, value in changes.items()})
    return fields


def test_an_admin_adds_a_bkash_api_method_whose_secrets_never_show(as_admin, brand, standin):
    added = post_form(
        as_admin,
        "/panel/settings/methods/wallet-api",
        wallet_form(standin.base_url, app_secret=SECRET),
        follow_redirects=True,
    )
    assert added.status_code == 200
    page = html.unescape(added.get_data(as_text=True))
    assert "bKash API added" in page
    assert SECRET not in page
    assert "…Z9Q1" in page  # the last four characters
    method = db.session.execute(db.select(PaymentMethod)).scalar_one()
    assert method.kind == "api" and method.provider == "bkash"
    row = db.session.execute(db.select(WalletCredential)).scalar_one()
    assert SECRET not in row.sealed
    assert opened(method)[1]["app_secret"] == SECRET
    (entry,) = [a for a in audit_actions(brand) if a[0] == "payment_method.add"]
    assert entry[2] == str(method.id) or entry[2] == method.id


def test_a_missing_secret_or_a_bad_base_url_is_shown_at_its_field(as_admin, standin):
    missing = post_form(
        as_admin, "/panel/settings/methods/wallet-api", wallet_form(standin.base_url, password="")
    )
    assert missing.status_code == 422
    assert "Password is required" in missing.get_data(as_text=True)
    bad = post_form(
        as_admin, "/panel/settings/methods/wallet-api", wallet_form("ftp://bkash.example")
    )
    assert bad.status_code == 422
    assert "Base URL must be" in html.unescape(bad.get_data(as_text=True))
    assert db.session.execute(db.select(db.func.count()).select_from(PaymentMethod)).scalar() == 0


def test_the_test_button_reports_working_credentials(as_admin, brand, bkash_api, standin):
    answer = post_form(
        as_admin, f"/panel/settings/methods/{bkash_api.id}/check", follow_redirects=True
    )
    assert "The credentials work" in html.unescape(answer.get_data(as_text=True))
    assert "payment_method.check_credentials" in [a[0] for a in audit_actions(brand)]


def test_the_test_button_reports_bad_credentials_in_bkash_s_words(as_admin, brand, standin):
    from gateway.wallets.credentials import add_api_method

    wrong = add_api_method(brand, "bkash", standin.base_url, {**CREDENTIALS, "app_key": "wrong"})
    answer = post_form(as_admin, f"/panel/settings/methods/{wrong.id}/check", follow_redirects=True)
    page = html.unescape(answer.get_data(as_text=True))
    assert "The credentials did not work" in page
    assert "bKash refused the credentials: Invalid App Key (2001)" in page
    assert "wrong" not in page.split("The credentials did not work")[1][:200]
    audited = [a for a in audit_actions(brand) if a[0] == "payment_method.check_credentials"]
    assert len(audited) == 1


def test_the_test_button_reports_bkash_out_of_reach(as_admin, brand, bkash_api, standin):
    standin.__exit__()
    answer = post_form(
        as_admin, f"/panel/settings/methods/{bkash_api.id}/check", follow_redirects=True
    )
    assert "bKash could not be reached" in html.unescape(answer.get_data(as_text=True))


def test_the_command_line_adds_a_bkash_api_method(runner, brand, standin):
    result = runner.invoke(
        args=[
            "gateway",
            "add-method",
            "--provider",
            "bkash",
            "--kind",
            "api",
            "--base-url",
            standin.base_url,
            "--app-key",
            CREDENTIALS["app_key"],
            "--app-secret",
            SECRET,
            "--username",
            CREDENTIALS["username"],
            "--password",
            CREDENTIALS["password"],
        ]
    )
    assert result.exit_code == 0, result.output
    assert "bKash API" in result.output
    assert SECRET not in result.output
    method = db.session.execute(db.select(PaymentMethod)).scalar_one()
    assert opened(method) == (standin.base_url, {**CREDENTIALS, "app_secret": SECRET})


def test_the_command_line_refuses_an_api_method_without_its_secrets(runner, brand, standin):
    result = runner.invoke(
        args=[
            "gateway",
            "add-method",
            "--provider",
            "bkash",
            "--kind",
            "api",
            "--base-url",
            standin.base_url,
            "--app-key",
            "k",
        ]
    )
    assert result.exit_code != 0
    assert "--app-secret" in result.output
    refused = runner.invoke(
        args=[
            "gateway",
            "add-method",
            "--provider",
            "bkash",
            "--number",
            "01712345678",
            "--app-key",
            "k",
        ]
    )
    assert refused.exit_code != 0
    assert "--app-key is for --kind api only" in refused.output
    assert json.dumps([]) == json.dumps(
        db.session.execute(db.select(PaymentMethod.id)).scalars().all()
    )


def test_switching_an_api_method_off_names_it_by_its_wallet(as_admin, bkash_api):
    answer = post_form(
        as_admin, f"/panel/settings/methods/{bkash_api.id}/toggle", follow_redirects=True
    )
    page = html.unescape(answer.get_data(as_text=True))
    assert "bKash API is switched off." in page
    assert bkash_api.number not in page


def test_a_panel_refund_is_made_at_bkash_and_a_refusal_says_why(
    as_admin, brand, payment, bkash_api, standin
):
    from gateway.payments.models.payment import Refund
    from tests.panel.test_payment_actions import refund
    from tests.wallets.bkash_support import pay_through_bkash
    from tests.wallets.test_bkash_refunds import bkash_payment

    customer = as_admin.application.test_client()
    pay_through_bkash(customer, payment, bkash_api)
    done = refund(as_admin, payment, {"amount": "100.00", "reason": "broken"}, True)
    assert done.status_code == 200
    assert bkash_payment(standin, payment)["refunded"] == 100
    bkash_payment(standin, payment)["refunded"] = 500  # all refunded at bKash by hand meanwhile
    refused = refund(as_admin, payment, {"amount": "50.00", "reason": "again"}, True)
    page = html.unescape(refused.get_data(as_text=True))
    assert "bKash refused the refund: Refund amount exceeds the paid amount (2071)" in page
    amounts = db.session.execute(db.select(Refund.amount)).scalars().all()
    assert [str(a) for a in amounts] == ["100.00"]


def test_a_panel_refund_left_pending_is_audited_as_the_user_s(
    app, as_admin, admin, brand, payment, bkash_api, standin, monkeypatch
):
    from gateway.wallets.models import WalletRefund
    from tests.panel.test_payment_actions import refund
    from tests.wallets.bkash_support import pay_through_bkash
    from tests.wallets.test_bkash_refunds import pending_audits

    pay_through_bkash(as_admin.application.test_client(), payment, bkash_api)
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    standin.refund_delay = 2
    left = refund(as_admin, payment, {"amount": "100.00", "reason": "broken"}, True)
    standin.refund_delay = 0
    assert left.status_code == 503
    assert "did not answer the refund in time" in html.unescape(left.get_data(as_text=True))
    db.session.expire_all()
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    assert (attempt.state, attempt.refunded_by_id) == ("pending", admin.id)
    assert pending_audits() == [
        (
            admin.id,
            "owner@shop.test",
            "payment",
            payment.public_id,
            {
                "wallet_refund_id": attempt.id,
                "amount": "100.00",
                "reason": "broken",
                "wallet": "bKash",
            },
        )
    ]
