"""`flask gateway simulate-sms`: a real provider-format text, encrypted as a phone would, through
/sms.
"""

from datetime import timedelta
from decimal import Decimal

import pytest

from gateway.cli.doctor import check_heartbeats
from gateway.clock import utcnow
from gateway.devices.brand_devices import get_device, list_devices
from gateway.devices.models.device import SIMULATOR_PLATFORM, Device
from gateway.devices.pairing import create_pairing_code
from gateway.domain_errors import NotFound
from gateway.extensions import db
from gateway.notifications.outbox import has_paired_phone
from gateway.notifications.watch import watch_phones
from gateway.panel.dashboard import last_heartbeat
from gateway.payments.models.payment import Payment
from gateway.sms.matching import submit_claim
from gateway.sms.models.inbound_sms import InboundSms
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.sms.outbound import lease_outbound_sms, queue_sms
from gateway.sms.simulator import SimulatorRefused, simulator_device
from tests.factories import PaymentFactory, UserFactory, paired_device
from tests.local_servers import serving
from tests.panel.conftest import panel_client, sign_in

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


@pytest.fixture
def production(app, monkeypatch):
    """The suite's app in the production profile for one test."""
    monkeypatch.setitem(app.config, "APP_ENV", "production")
    return app


@pytest.mark.parametrize("via", ["local", "http", "auto"])
def test_simulate_sms_refuses_in_production_and_fakes_nothing(
    runner, brand, live_server, production, via
):
    payment = PaymentFactory(brand=brand, amount=Decimal("500.00"))
    submit_claim(payment, "bkash", TRX)

    result = simulate(runner, "--via", via)

    assert result.exit_code == 1
    assert "The SMS simulator is off in production (APP_ENV=production)" in result.output
    assert "would complete real payments" in result.output
    assert "SMS text" not in result.output and "Traceback" not in result.output
    assert db.session.execute(db.select(InboundSms)).first() is None
    assert db.session.execute(db.select(Device)).first() is None  # no simulator paired either
    assert db.session.get(Payment, payment.id).status == "processing"


def test_the_simulator_itself_refuses_in_production_whoever_calls_it(brand, production):
    with pytest.raises(SimulatorRefused, match="off in production"):
        simulator_device(brand)
    assert db.session.execute(db.select(Device)).first() is None


def simulated_once(runner, base_url):
    """Run the simulator once in development; its device."""
    base_url("http://127.0.0.1:9")
    assert simulate(runner).exit_code == 0
    return db.session.execute(
        db.select(Device).where(Device.platform == SIMULATOR_PLATFORM)
    ).scalar_one()


def test_the_simulator_is_no_phone_of_the_brand(runner, brand, base_url):
    simulator = simulated_once(runner, base_url)
    # Even a heartbeat (none comes from it) would not make it a phone, online or silent.
    simulator.last_heartbeat_at = utcnow() - timedelta(hours=2)
    db.session.commit()

    assert list_devices(brand) == ([], [])
    assert has_paired_phone(brand.id) is False
    assert last_heartbeat(brand) is None
    assert watch_phones(utcnow()) == 0
    assert [finding.message for finding in check_heartbeats()] == [
        "Test Shop has no paired phone: no SMS arrives, so no payment completes."
    ]
    with pytest.raises(NotFound):
        get_device(brand, simulator.uuid)

    phone, _, _ = paired_device(brand, name="Counter phone")
    assert list_devices(brand) == ([phone], [])
    assert has_paired_phone(brand.id) is True


def test_outbound_sms_is_never_leased_to_the_simulator(runner, brand, base_url):
    simulator = simulated_once(runner, base_url)
    message = queue_sms(brand, "+8801712345678", "Invoice INV-1: pay at https://pay.example/i/1")
    db.session.commit()

    assert lease_outbound_sms(brand, simulator.uuid) == []
    db.session.expire_all()
    assert db.session.get(OutboundSms, message.id).shown_status == "queued"
    phone, _, _ = paired_device(brand)
    assert [sms.id for sms in lease_outbound_sms(brand, phone.uuid)] == [message.id]


def test_the_panel_lists_no_simulator_and_says_not_paired(app, runner, brand, base_url):
    simulated_once(runner, base_url)
    admin = UserFactory(brand=brand, role="super_admin", email="owner@shop.test")
    client = panel_client(app)
    assert sign_in(client, admin).status_code == 302

    devices = client.get("/panel/devices").get_data(as_text=True)
    dashboard = client.get("/panel/dashboard").get_data(as_text=True)

    assert "Gateway simulator" not in devices and "gateway-simulator" not in devices
    assert "Not paired" in dashboard


def test_a_phone_may_not_pair_under_the_simulators_platform(client, brand):
    response = client.post(
        "/api/mobile/v1/devices",
        json={
            "pairing_code": create_pairing_code(brand),
            "device_id": "phone-1",
            "device_name": "Counter phone",
            "platform": SIMULATOR_PLATFORM,
            "fingerprint": "install-1",
        },
    )

    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "VALIDATION_ERROR"
    assert [(e["field"], e["message"]) for e in body["errors"]] == [
        ("platform", "This platform name is reserved.")
    ]
    assert db.session.execute(db.select(Device)).first() is None
