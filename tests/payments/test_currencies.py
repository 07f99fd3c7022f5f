"""Currencies: a brand accepts a currency at a rate (taka per unit), a payment in it fixes its taka
amount and rate at creation, and an SMS in taka pays it; bad rates and codes are refused by field.
"""

import json
from decimal import Decimal

import pytest

from gateway.accounts.models.audit import AuditLog
from gateway.accounts.models.brand import Brand
from gateway.domain_errors import InvalidState, ValidationFailed
from gateway.extensions import db
from gateway.payments.currencies import accept_currency, rate_for, stop_accepting
from gateway.payments.models.currency import CurrencyRate
from gateway.payments.models.payment import Payment
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import submit_trx_id
from tests.factories import PaymentMethodFactory, bkash_text, paired_device, reload, sms_message

PAYMENTS = "/api/v1/payments"
TRX = "8N7A6B5C4D"


def set_currency(runner, *args):
    return runner.invoke(args=["gateway", "set-currency", *args])


def create(client, auth, amount="10.00", currency="USD", **extra):
    return client.post(
        PAYMENTS, json={"amount": amount, "currency": currency, **extra}, headers=auth
    )


def made(client, auth, **given):
    """Create a payment through the API and read it back as the merchant would."""
    created = create(client, auth, **given)
    assert created.status_code == 201, created.get_data(as_text=True)
    payment_id = created.get_json()["data"]["payment_id"]
    return client.get(f"{PAYMENTS}/{payment_id}", headers=auth).get_json()["data"]


def stored(public_id):
    db.session.expire_all()
    return db.session.execute(db.select(Payment).filter_by(public_id=public_id)).scalar_one()


def forward_over_http(client, brand, text):
    """The companion app forwarding one text through the mobile API, as a real phone does."""
    _, tokens, aes_key = paired_device(brand)
    response = client.post(
        "/api/mobile/v1/sms",
        json={"messages": [sms_message(aes_key, text)]},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["data"]["results"][0]


def test_a_usd_payment_is_paid_in_taka_at_the_rate_fixed_when_it_was_created(
    client, brand, auth, runner
):
    assert set_currency(runner, "USD", "--rate", "121.50").exit_code == 0
    method = PaymentMethodFactory(brand=brand)
    data = made(client, auth, callback_url="https://shop.example/hook")
    assert (data["amount"], data["currency"], data["amount_bdt"], data["exchange_rate"]) == (
        "10.00",
        "USD",
        "1215.00",
        "121.5",
    )
    # The merchant re-rates USD after the payment was made: it keeps its own rate.
    assert set_currency(runner, "USD", "--rate", "130").exit_code == 0

    page = client.get(f"/checkout/{stored(data['payment_id']).token}").get_data(as_text=True)
    assert "$10.00" in page
    assert "That is ৳1,215.00 in taka, at ৳121.5 per USD." in page
    assert submit_trx_id(client, stored(data["payment_id"]), method, TRX).status_code in (302, 303)
    result = forward_over_http(client, brand, bkash_text("1215.00", TRX))

    assert result["status"] == "accepted"
    payment = stored(data["payment_id"])
    assert payment.status == "completed"
    assert (payment.amount, payment.amount_bdt, payment.exchange_rate, payment.amount_paid) == (
        Decimal("10.00"),
        Decimal("1215.00"),
        Decimal("121.5"),
        Decimal("1215.00"),
    )
    read = client.get(f"{PAYMENTS}/{payment.public_id}", headers=auth).get_json()["data"]
    assert (read["status"], read["amount_bdt"], read["exchange_rate"]) == (
        "completed",
        "1215.00",
        "121.5",
    )
    [delivery] = db.session.execute(
        db.select(WebhookDelivery).where(WebhookDelivery.event == "payment.completed")
    ).scalars()
    body = json.loads(delivery.payload)["data"]
    assert (body["amount"], body["currency"], body["amount_bdt"], body["exchange_rate"]) == (
        "10.00",
        "USD",
        "1215.00",
        "121.5",
    )
    # A payment made after the change takes the new rate.
    later = made(client, auth)
    assert (later["amount_bdt"], later["exchange_rate"]) == ("1300.00", "130")


def test_an_sms_of_the_dollar_amount_does_not_pay_a_usd_payment(client, brand, auth, runner):
    set_currency(runner, "USD", "--rate", "121.50")
    method = PaymentMethodFactory(brand=brand)
    data = made(client, auth)
    submit_trx_id(client, stored(data["payment_id"]), method, TRX)

    forward_over_http(client, brand, bkash_text("10.00", TRX))

    payment = stored(data["payment_id"])
    assert payment.status == "processing"
    assert payment.review_reason == "SMS amount 10.00 differs from 1215.00"


def test_the_taka_amount_is_rounded_up_to_the_paisa(client, brand, auth):
    accept_currency(brand, "USD", "121.333333", "owner@shop.test")
    data = made(client, auth, amount="0.10")
    # 0.10 × 121.333333 = 12.1333333: the customer sends 12.14, never a paisa short.
    assert (data["amount_bdt"], data["exchange_rate"]) == ("12.14", "121.333333")


def test_a_listed_currency_without_a_rate_keeps_no_taka_amount(client, brand, auth):
    data = made(client, auth)  # the test brand lists USD with no rate
    assert (data["amount_bdt"], data["exchange_rate"], data["amount_paid"]) == (None, None, None)


def test_a_taka_payment_needs_no_rate(client, auth):
    data = made(client, auth, amount="500.00", currency="BDT")
    assert (data["amount_bdt"], data["exchange_rate"]) == ("500.00", None)


@pytest.mark.parametrize("currency", ["EUR", "eur"])
def test_an_unaccepted_currency_is_refused_naming_the_accepted_ones(client, auth, currency):
    response = create(client, auth, currency=currency)

    assert response.status_code == 422
    [error] = response.get_json()["errors"]
    assert error["field"] == "currency"
    assert error["message"] == "EUR is not accepted. Currency must be one of BDT, USD."
    assert db.session.scalar(db.select(db.func.count()).select_from(Payment)) == 0


@pytest.mark.parametrize("currency", ["US", "US1", "DOLLAR", "", 5])
def test_a_malformed_currency_code_is_refused_on_its_field(client, auth, currency):
    response = create(client, auth, currency=currency)

    assert response.status_code == 422
    assert [error["field"] for error in response.get_json()["errors"]] == ["currency"]


def test_a_payment_link_in_an_unaccepted_currency_is_refused(client, auth):
    response = client.post(
        "/api/v1/payment-links",
        json={"title": "Hosting", "amount": "5.00", "currency": "EUR"},
        headers=auth,
    )
    assert response.status_code == 422
    [error] = response.get_json()["errors"]
    assert error["field"] == "currency" and "BDT, USD" in error["message"]


@pytest.mark.parametrize(
    "rate, message",
    [
        ("0", "A rate must be more than zero."),
        ("0.000", "A rate must be more than zero."),
        ("-121.5", "A rate must be more than zero."),
        ("abc", "Enter the rate as a number of taka, such as 121.50."),
        ("", "Enter the rate as a number of taka, such as 121.50."),
        (None, "Enter the rate as a number of taka, such as 121.50."),
        (True, "Enter the rate as a number of taka, such as 121.50."),
        ("NaN", "Enter the rate as a number of taka, such as 121.50."),
        ("Infinity", "Enter the rate as a number of taka, such as 121.50."),
        ("1e400", "A rate is between 0.000001 and 100000 taka per unit."),
        ("121.1234567", "A rate has at most 6 decimal places."),
        ("100000.01", "A rate is between 0.000001 and 100000 taka per unit."),
    ],
)
def test_a_bad_rate_is_refused_on_its_field_and_changes_nothing(brand, rate, message):
    with pytest.raises(ValidationFailed) as refused:
        accept_currency(brand, "USD", rate, "owner@shop.test")

    assert refused.value.errors == [{"field": "rate", "message": message, "code": "invalid"}]
    db.session.rollback()
    assert rate_for(brand, "USD") is None
    assert db.session.get(Brand, brand.id).currencies == "BDT,USD"


@pytest.mark.parametrize(
    "code, message",
    [
        ("US", "Use a three-letter currency code such as USD."),
        ("USDT", "Use a three-letter currency code such as USD."),
        ("U$D", "Use a three-letter currency code such as USD."),
        ("", "Use a three-letter currency code such as USD."),
        ("bdt", "BDT is the taka: it is always accepted and needs no rate."),
    ],
)
def test_a_bad_code_is_refused_on_its_field(brand, code, message):
    with pytest.raises(ValidationFailed) as refused:
        accept_currency(brand, code, "121.5", "owner@shop.test")

    assert refused.value.errors[0]["field"] == "code"
    assert refused.value.errors[0]["message"] == message


def test_accepting_a_new_currency_lists_it_and_stopping_forgets_its_rate(brand):
    details = accept_currency(brand, "eur", "131.25", "owner@shop.test")

    assert details == {
        "code": "EUR",
        "rate": [None, "131.25"],
        "source": "manual",
        "accepted": True,
    }
    assert (reload(brand).currencies, rate_for(brand, "EUR")) == ("BDT,USD,EUR", Decimal("131.25"))
    row = db.session.execute(db.select(CurrencyRate).filter_by(code="EUR")).scalar_one()
    assert (row.source, row.updated_by) == ("manual", "owner@shop.test")

    assert stop_accepting(brand, "EUR") == {"code": "EUR", "rate": ["131.25", None]}
    assert (reload(brand).currencies, rate_for(brand, "EUR")) == ("BDT,USD", None)


@pytest.mark.parametrize("code", ["BDT", "EUR", "X"])
def test_stopping_bdt_or_a_currency_not_accepted_is_refused(brand, code):
    with pytest.raises(ValidationFailed) as refused:
        stop_accepting(brand, code)
    assert refused.value.errors[0]["field"] == "code"
    assert reload(brand).currencies == "BDT,USD"


def test_the_cli_accepts_a_currency_then_changes_its_rate_and_audits_both(runner, brand):
    first = set_currency(runner, "eur", "--rate", "131.5")
    second = set_currency(runner, "EUR", "--rate", "132")

    assert first.exit_code == 0, first.output
    assert first.output.splitlines() == [
        "EUR accepted at 131.5 taka per unit.",
        "Accepted currencies: BDT, USD, EUR.",
    ]
    assert second.output.splitlines()[0] == "EUR rate changed from 131.5 to 132 taka per unit."
    entries = db.session.execute(db.select(AuditLog).order_by(AuditLog.id)).scalars().all()
    assert [(e.action, e.user_email, e.target_id, e.details["rate"]) for e in entries] == [
        ("currency.accept", "command line", "EUR", [None, "131.5"]),
        ("currency.rate", "command line", "EUR", ["131.5", "132"]),
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["USD", "--rate", "0"], "A rate must be more than zero."),
        (["USD", "--rate", "-5"], "A rate must be more than zero."),
        (["USD", "--rate", "ten"], "Enter the rate as a number of taka, such as 121.50."),
        (["BDT", "--rate", "1"], "BDT is the taka: it is always accepted and needs no rate."),
        (["DOLLAR", "--rate", "121"], "Use a three-letter currency code such as USD."),
    ],
)
def test_the_cli_refuses_bad_input_and_changes_nothing(runner, brand, args, message):
    result = set_currency(runner, *args)

    assert result.exit_code == 1
    assert f"Error: {message}" in result.output
    assert rate_for(brand, "USD") is None
    assert db.session.scalar(db.select(db.func.count()).select_from(AuditLog)) == 0


def test_the_cli_needs_a_rate_and_a_brand(runner):
    assert set_currency(runner, "USD").exit_code == 2  # --rate is required
    result = set_currency(runner, "USD", "--rate", "121")
    assert result.exit_code == 1 and "run `flask gateway bootstrap` first" in result.output


def test_the_checkout_says_the_taka_to_send_in_bangla(client, brand, auth):
    accept_currency(brand, "USD", "121.5", "owner@shop.test")
    data = made(client, auth)

    page = client.get(f"/checkout/{stored(data['payment_id']).token}?lang=bn")

    assert "অর্থাৎ টাকায় ৳1,215.00, প্রতি USD ৳121.5 হারে।" in page.get_data(as_text=True)


def test_an_invoice_in_an_unaccepted_currency_is_refused_naming_the_accepted_ones(client, auth):
    response = client.post(
        "/api/v1/invoices",
        json={
            "customer": {"name": "Rahim", "email": "rahim@example.com"},
            "items": [{"description": "Hosting", "quantity": "1", "unit_price": "5.00"}],
            "currency": "EUR",
        },
        headers=auth,
    )
    assert response.status_code == 422
    [error] = response.get_json()["errors"]
    assert error["field"] == "currency" and "BDT, USD" in error["message"]


def test_of_two_racing_changes_to_the_list_one_wins_and_the_other_is_refused(app, brand):
    stale = db.session.get(Brand, brand.id)
    assert stale.currencies == "BDT,USD"
    # Another request accepts GBP meanwhile (its own connection, committed).
    with db.engine.begin() as other:
        other.execute(db.update(Brand).where(Brand.id == brand.id).values(currencies="BDT,USD,GBP"))

    with pytest.raises(InvalidState):
        accept_currency(stale, "EUR", "131", "owner@shop.test")

    db.session.rollback()
    assert reload(brand).currencies == "BDT,USD,GBP"
    assert rate_for(brand, "EUR") is None
