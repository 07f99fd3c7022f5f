"""Settings → Currencies: owners and admins list, rate and stop currencies and set the rate feed;
every change audited, every form behind CSRF, staff kept out, bad input shown on its field."""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.currencies import accept_currency, rate_for
from gateway.payments.models.currency import RateFeed
from gateway.payments.rate_feed import refresh_rate_feeds, set_feed_url
from tests.panel.conftest import audit_actions, post_form, reloaded

PAGE = "/panel/settings/currencies"


def test_the_page_lists_each_currency_with_its_rate_source_and_a_missing_rate(as_admin, brand):
    accept_currency(brand, "EUR", "131.25", "owner@shop.test")

    html = as_admin.get(PAGE).get_data(as_text=True)

    assert 'id="currency-BDT"' in html and "The taka: always accepted, no rate." in html
    assert "131.25" in html and "By hand" in html and "owner@shop.test" in html
    # USD is listed without a rate (as before rates existed): the page says what that means.
    assert "No rate" in html and "cannot be paid by SMS until you set a rate" in html


def test_an_admin_accepts_a_currency_at_a_rate_and_it_is_audited(as_admin, brand, admin):
    response = post_form(as_admin, PAGE, {"code": "eur", "rate": "131.50"})

    assert response.status_code == 302
    assert (reloaded(brand).currencies, rate_for(brand, "EUR")) == ("BDT,USD,EUR", Decimal("131.5"))
    assert audit_actions(brand)[-1] == ("currency.accept", admin.email, "EUR")
    post_form(as_admin, PAGE, {"code": "EUR", "rate": "133"})
    assert audit_actions(brand)[-1] == ("currency.rate", admin.email, "EUR")


@pytest.mark.parametrize(
    "form, field_message",
    [
        ({"code": "USD", "rate": "0"}, "A rate must be more than zero."),
        ({"code": "USD", "rate": "-1"}, "A rate must be more than zero."),
        ({"code": "USD", "rate": "lots"}, "Enter the rate as a number of taka, such as 121.50."),
        ({"code": "DOLLAR", "rate": "121"}, "Use a three-letter currency code such as USD."),
        ({"code": "BDT", "rate": "1"}, "BDT is the taka: it is always accepted and needs no rate."),
    ],
)
def test_bad_input_is_shown_on_its_field_and_changes_nothing(as_admin, brand, form, field_message):
    response = post_form(as_admin, PAGE, form)

    assert response.status_code == 422
    assert field_message in response.get_data(as_text=True)
    assert rate_for(brand, "USD") is None and reloaded(brand).currencies == "BDT,USD"
    assert [a for a in audit_actions(brand) if a[0].startswith("currency.")] == []


def test_stopping_a_currency_refuses_its_new_payments(as_admin, brand, admin):
    response = post_form(as_admin, f"{PAGE}/USD/stop")

    assert response.status_code == 302
    assert reloaded(brand).currencies == "BDT"
    assert audit_actions(brand)[-1] == ("currency.stop", admin.email, "USD")
    page = post_form(as_admin, f"{PAGE}/BDT/stop", follow_redirects=True).get_data(as_text=True)
    assert "BDT is the taka" in page and reloaded(brand).currencies == "BDT"


def test_every_form_needs_its_csrf_token(as_admin, brand):
    for url, data in (
        (PAGE, {"code": "EUR", "rate": "130"}),
        (f"{PAGE}/USD/stop", {}),
        (f"{PAGE}/feed", {"feed_url": "https://rates.example/bdt.json"}),
        (f"{PAGE}/feed/fetch", {}),
    ):
        assert as_admin.post(url, data=data).status_code == 400
    assert reloaded(brand).currencies == "BDT,USD"
    assert db.session.get(RateFeed, brand.id) is None


def test_staff_cannot_open_or_change_currencies(as_staff, brand):
    assert as_staff.get(PAGE).status_code == 403
    assert post_form(as_staff, PAGE, {"code": "EUR", "rate": "130"}).status_code == 403
    assert reloaded(brand).currencies == "BDT,USD"


def test_the_feed_url_is_saved_fetched_and_its_failure_shown_on_the_page(
    as_admin, brand, admin, httpserver
):
    accept_currency(brand, "USD", "120", "owner@shop.test")
    url = httpserver.url_for("/rates.json")
    httpserver.expect_request("/rates.json").respond_with_json({"rates": {"USD": 121.5}})

    assert post_form(as_admin, f"{PAGE}/feed", {"feed_url": url}).status_code == 302
    assert audit_actions(brand)[-1] == ("currency.feed", admin.email, str(brand.id))
    fetched = post_form(as_admin, f"{PAGE}/feed/fetch", follow_redirects=True)
    assert "Rates fetched from the feed." in fetched.get_data(as_text=True)
    assert rate_for(brand, "USD") == Decimal("121.5")

    httpserver.clear()
    httpserver.expect_request("/rates.json").respond_with_data("nope", status=502)
    refresh_rate_feeds()
    html = as_admin.get(PAGE).get_data(as_text=True)
    assert 'id="feed-error"' in html
    assert "The rate feed is failing: the last rates are kept." in html
    assert "The feed answered HTTP 502." in html
    assert rate_for(brand, "USD") == Decimal("121.5")


def test_a_bad_feed_url_is_shown_on_its_field(as_admin, brand):
    response = post_form(as_admin, f"{PAGE}/feed", {"feed_url": "ftp://rates.example/x"})
    assert response.status_code == 422
    assert "Enter an absolute http:// or https:// address." in response.get_data(as_text=True)
    assert db.session.get(RateFeed, brand.id) is None


def test_an_empty_feed_url_removes_the_feed(as_admin, brand):
    set_feed_url(brand, "https://rates.example/bdt.json")
    post_form(as_admin, f"{PAGE}/feed", {"feed_url": ""})
    db.session.expire_all()
    assert db.session.get(RateFeed, brand.id) is None


def test_a_code_dropped_from_the_settings_list_loses_its_rate(as_admin, brand):
    accept_currency(brand, "EUR", "131", "owner@shop.test")
    form = {"name": "Test Shop", "primary_color": "#0f766e", "timezone": "Asia/Dhaka"}

    assert (
        post_form(as_admin, "/panel/settings", {**form, "currencies": "BDT,USD"}).status_code == 302
    )
    post_form(as_admin, "/panel/settings", {**form, "currencies": "BDT,USD,EUR"})

    # Listed again, EUR starts with no rate rather than the one it had before it was dropped.
    assert (reloaded(brand).currencies, rate_for(brand, "EUR")) == ("BDT,USD,EUR", None)
