"""`make run` (flask gateway bootstrap) tells the operator where to sign in, on the first run and
every later one.
"""

from gateway.accounts.models.user import User
from tests.panel.conftest import sign_in


def test_bootstrap_prints_where_to_sign_in_to_the_panel(app, runner, monkeypatch):
    monkeypatch.setitem(app.config, "BASE_URL", "https://pay.example.com")
    first = runner.invoke(args=["gateway", "bootstrap", "--password", "a long password"])
    assert first.exit_code == 0, first.output
    assert "Panel:        https://pay.example.com/panel/sign-in" in first.output
    again = runner.invoke(args=["gateway", "bootstrap"])
    assert (
        "Already bootstrapped" in again.output
        and "https://pay.example.com/panel/sign-in" in again.output
    )


def test_the_bootstrapped_administrator_signs_in_to_the_panel(runner, client):
    runner.invoke(
        args=["gateway", "bootstrap", "--email", "owner@shop.test", "--password", "a long password"]
    )
    assert (
        sign_in(client, User(email="owner@shop.test"), "a long password").headers["Location"]
        == "/panel/dashboard"
    )
