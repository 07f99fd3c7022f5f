"""The rate feed against a local HTTP server: both JSON shapes re-rate the accepted currencies; a
feed that fails (down, an error, not JSON, a missing or absurd rate) keeps the last rate, shows why
and tells the merchant once per run of failures.
"""

import socket
from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.domain_errors import ValidationFailed
from gateway.extensions import db
from gateway.jobs import PERIODIC
from gateway.payments.currencies import accept_currency, rate_for
from gateway.payments.models.currency import CurrencyRate, RateFeed
from gateway.payments.rate_feed import refresh_brand_rates, refresh_rate_feeds, set_feed_url
from tests.notifications.conftest import configure, notifications

RATES = "/rates.json"
FAILING = "rates.feed_failing"


@pytest.fixture
def feed(brand, httpserver):
    """The brand accepts USD at 120 by hand and reads its rates from the local server."""
    accept_currency(brand, "USD", "120", "owner@shop.test")
    set_feed_url(brand, httpserver.url_for(RATES))
    configure(brand)  # Telegram set up: a failing feed has a channel to tell the merchant on
    return httpserver


def serve_json(server, document, status=200):
    server.clear()
    server.expect_request(RATES, method="GET").respond_with_json(document, status=status)


def serve_text(server, text, status=200):
    server.clear()
    server.expect_request(RATES, method="GET").respond_with_data(text, status=status)


def rate_row(code="USD"):
    db.session.expire_all()
    return db.session.execute(db.select(CurrencyRate).filter_by(code=code)).scalar_one_or_none()


def feed_row(brand):
    db.session.expire_all()
    return db.session.get(RateFeed, brand.id)


def test_the_feed_job_is_hourly():
    assert ("rate-feeds", "gateway.payments.rate_feed.refresh_rate_feeds", 3600) in PERIODIC


def test_a_feed_of_taka_per_unit_re_rates_the_accepted_currency_and_is_audited(brand, feed):
    serve_json(feed, {"rates": {"USD": 121.5, "EUR": 131}})

    assert refresh_brand_rates(brand) == []

    row = rate_row()
    assert (row.rate, row.source, row.updated_by) == (Decimal("121.5"), "feed", "rate feed")
    assert rate_row("EUR") is None  # not accepted: the feed only re-rates what the brand takes
    [entry] = db.session.execute(
        db.select(AuditLog).where(AuditLog.action == "currency.rate")
    ).scalars()
    assert (entry.user_email, entry.target_id, entry.details) == (
        "rate feed",
        "USD",
        {"code": "USD", "rate": ["120", "121.5"], "source": "feed"},
    )
    state = feed_row(brand)
    assert (state.last_error, state.failing_since) == (None, None)
    assert state.last_success_at is not None
    assert notifications(brand, FAILING) == []


def test_a_feed_based_on_bdt_is_inverted(brand, feed):
    serve_json(feed, {"base": "BDT", "rates": {"BDT": 1, "USD": "0.008"}})
    refresh_rate_feeds()
    assert rate_for(brand, "USD") == Decimal("125")


def test_a_feed_based_on_another_currency_is_crossed_through_bdt(brand, feed):
    accept_currency(brand, "EUR", "130", "owner@shop.test")
    serve_json(feed, {"base_code": "USD", "rates": {"BDT": 122, "EUR": 0.9}})

    refresh_rate_feeds()

    assert (rate_for(brand, "USD"), rate_for(brand, "EUR")) == (
        Decimal("122"),
        Decimal("135.555556"),
    )


def test_a_listed_currency_without_a_rate_gets_one_from_the_feed(brand, feed):
    brand.currencies = "BDT,USD,GBP"
    db.session.commit()
    serve_json(feed, {"rates": {"USD": 121, "GBP": 154.25}})
    refresh_rate_feeds()
    assert rate_for(brand, "GBP") == Decimal("154.25")


@pytest.mark.parametrize(
    "serve, problem",
    [
        (lambda s: serve_text(s, "oops", status=500), "The feed answered HTTP 500."),
        (lambda s: serve_text(s, "<html>rates</html>"), "The feed did not answer JSON."),
        (lambda s: serve_json(s, {"USD": 121}), 'The feed\'s JSON has no "rates" object.'),
        (lambda s: serve_json(s, {"rates": {"EUR": 131}}), "USD is not in the feed."),
        (
            lambda s: serve_json(s, {"rates": {"USD": "n/a"}}),
            "The feed's USD rate is not a number.",
        ),
        (lambda s: serve_json(s, {"rates": {"USD": True}}), "The feed's USD rate is not a number."),
        (
            lambda s: serve_json(s, {"rates": {"USD": 0}}),
            "The feed's USD rate 0 is not a sane rate.",
        ),
        (
            lambda s: serve_json(s, {"rates": {"USD": -121}}),
            "The feed's USD rate -121 is not a sane rate.",
        ),
        (
            lambda s: serve_text(s, '{"rates": {"USD": 1e400}}'),
            "The feed's USD rate 1e+400 is not a sane rate.",
        ),
        (
            # A public feed's shape read as taka per unit: 0.0082 taka a dollar is a mistake.
            lambda s: serve_json(s, {"rates": {"USD": 0.0082}}),
            "The feed's USD rate 0.0082 is too far from the current 120: set it by hand if it is "
            "right.",
        ),
        (
            lambda s: serve_json(s, {"base": "USD", "rates": {"EUR": 0.9}}),
            "The feed's rates are per USD but give no BDT rate.",
        ),
    ],
)
def test_a_failing_feed_keeps_the_last_rate_and_tells_the_merchant(brand, feed, serve, problem):
    serve(feed)

    assert refresh_rate_feeds() == 1  # the hourly job: one feed, failed
    assert feed_row(brand).last_error == problem

    row = rate_row()
    assert (row.rate, row.source) == (Decimal("120"), "manual")
    state = feed_row(brand)
    assert state.last_error == problem and state.failing_since is not None
    [told] = notifications(brand, FAILING)
    assert told.subject == "The exchange rate feed at localhost is failing"
    assert told.text.startswith(problem + "\nNew payments keep using the last rates.")


def test_a_feed_that_is_down_keeps_the_rate_and_tells_the_merchant_once_per_outage(brand, feed):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    set_feed_url(brand, f"http://127.0.0.1:{closed}/rates.json")

    first, second = refresh_brand_rates(brand), refresh_brand_rates(brand)

    assert first[0].startswith("The feed could not be read: Could not connect")
    assert second == first
    assert rate_for(brand, "USD") == Decimal("120")
    assert len(notifications(brand, FAILING)) == 1  # the second failure is the same outage

    # It comes back: the error goes, and a later failure is a new outage, told again.
    set_feed_url(brand, feed.url_for(RATES))
    serve_json(feed, {"rates": {"USD": 121}})
    assert refresh_brand_rates(brand) == []
    assert (feed_row(brand).last_error, rate_for(brand, "USD")) == (None, Decimal("121"))
    serve_text(feed, "down", status=503)
    refresh_rate_feeds()
    assert len(notifications(brand, FAILING)) == 2


def test_a_partly_good_feed_updates_what_it_can_and_reports_the_rest(brand, feed):
    accept_currency(brand, "EUR", "130", "owner@shop.test")
    serve_json(feed, {"rates": {"USD": 121}})

    assert refresh_brand_rates(brand) == ["EUR is not in the feed."]
    assert (rate_for(brand, "USD"), rate_for(brand, "EUR")) == (Decimal("121"), Decimal("130"))


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://rates.example/x.json", "Enter an absolute http:// or https:// address."),
        ("rates.example", "Enter an absolute http:// or https:// address."),
    ],
)
def test_a_bad_feed_url_is_refused_on_its_field(brand, url, message):
    with pytest.raises(ValidationFailed) as refused:
        set_feed_url(brand, url)
    assert refused.value.errors[0] == {"field": "feed_url", "message": message, "code": "invalid"}


def test_a_private_feed_url_is_refused_where_private_destinations_are(app, brand, monkeypatch):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    with pytest.raises(ValidationFailed) as refused:
        set_feed_url(brand, "http://127.0.0.1:8080/rates.json")
    assert refused.value.errors[0]["field"] == "feed_url"
    assert refused.value.errors[0]["code"] == "private_address"


def test_an_empty_url_removes_the_feed(brand, feed):
    assert set_feed_url(brand, "") == (feed.url_for(RATES), None)
    assert feed_row(brand) is None and refresh_rate_feeds() == 0
