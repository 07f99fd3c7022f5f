"""`flask gateway simulate-sms`: a real provider-format text, encrypted as a phone would, through
/sms.
"""

from decimal import Decimal

import pytest

from gateway.devices.models.device import Device
from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from tests.factories import PaymentFactory
from tests.local_servers import serving

TRX = "8N7A6B5C4D"


@pytest.fixture
def base_url(app):
    """Point BASE_URL somewhere for one test, then restore it."""
    original = app.config["BASE_URL"]

    def point(url):
        app.config["BASE_URL"] = url

    yield point
    app.config["BASE_URL"] = original


@pytest.fixture
def live_server(app, base_url):
    """The app served by a real threaded werkzeug server; BASE_URL points at it."""
    with serving(app) as server:
        base_url(server.origin)
        yield server


def simulate(runner, *extra):
    return runner.invoke(
        args=[
            "gateway",
            "simulate-sms",
            "--provider",
            "bkash",
            "--amount",
            "500.00",
            "--trx-id",
            TRX,
            *extra,
        ]
    )


def the_sms():
    db.session.expire_all()
    return db.session.execute(db.select(InboundSms)).scalar_one()


def test_simulated_sms_completes_a_claimed_payment(runner, brand, base_url):
    base_url(
        "http://127.0.0.1:9"
    )  # nothing listens there: the command calls the ingestion service directly
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)

    result = simulate(runner, "--from", "01812345678")

    assert result.exit_code == 0, result.output
    assert "the ingestion service directly" in result.output
    assert "Result: accepted" in result.output and "SMS status: matched" in result.output
    sms = the_sms()
    assert sms.sender == "bKash"
    assert sms.body.startswith("You have received Tk 500.00 from 01812345678.")
    assert (sms.provider, sms.amount, sms.provider_trx_id, sms.status) == (
        "bkash",
        Decimal("500.00"),
        TRX,
        "matched",
    )
    assert db.session.get(Payment, payment.id).status == "completed"
    assert f"Payment {payment.public_id}: completed" in result.output


def test_simulated_sms_posts_over_http_when_a_server_answers(runner, brand, live_server):
    result = simulate(runner)

    assert result.exit_code == 0, result.output
    assert "HTTP POST http://127.0.0.1:" in result.output
    assert the_sms().status == "unmatched"


def test_simulator_is_a_paired_device_reused_across_runs(runner, brand, base_url):
    base_url("http://127.0.0.1:9")
    simulate(runner)
    second = runner.invoke(
        args=[
            "gateway",
            "simulate-sms",
            "--provider",
            "nagad",
            "--amount",
            "20",
            "--trx-id",
            "73HX9K2P",
            "--via",
            "local",
        ]
    )

    assert second.exit_code == 0, second.output
    [device] = db.session.execute(db.select(Device)).scalars().all()
    assert device.device_id == "gateway-simulator"
    rows = db.session.execute(
        db.select(InboundSms.device_id, InboundSms.provider, InboundSms.sender).order_by(
            InboundSms.id
        )
    ).all()
    assert rows == [(device.id, "bkash", "bKash"), (device.id, "nagad", "NAGAD")]


def test_simulating_the_same_sms_twice_reports_a_duplicate(runner, brand, base_url):
    base_url("http://127.0.0.1:9")

    first = simulate(runner)
    again = simulate(runner)

    assert "Result: accepted" in first.output
    assert "Result: duplicate" in again.output
    assert the_sms().status == "unmatched"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--provider", "paypal", "--amount", "5", "--trx-id", TRX], "paypal"),
        (["--provider", "bkash", "--amount", "5.001", "--trx-id", TRX], "two decimals"),
        (["--provider", "bkash", "--amount", "abc", "--trx-id", TRX], "Amount"),
        (["--provider", "bkash", "--amount", "5", "--trx-id", "!!"], "trx_id"),
    ],
)
def test_bad_options_fail_with_a_message(runner, brand, args, message):
    result = runner.invoke(args=["gateway", "simulate-sms", *args])

    assert result.exit_code != 0
    assert message in result.output
    assert db.session.execute(db.select(InboundSms)).first() is None


def test_simulate_sms_needs_a_brand(runner):
    result = simulate(runner)

    assert result.exit_code != 0
    assert "bootstrap" in result.output
