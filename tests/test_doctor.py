"""`flask gateway doctor`: each problem it knows, provoked for real, and a sound production
deployment passing.
"""

import logging.config
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from flask_migrate import upgrade
from freezegun import freeze_time
from sqlalchemy import create_engine, text

from config import DEV_SECRET
from gateway import create_app
from gateway.accounts.models.brand import Brand
from gateway.cli import doctor
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.mobile.companion import record_heartbeat
from gateway.payments.methods import add_method, update_method
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.factories import paired_device
from tests.local_servers import free_port
from tests.services import POSTGRES_URL, REDIS_URL, postgres_reachable, unavailable
from tests.webhook_support import WorkerProcess, rq_redis  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = str(ROOT / "migrations")
STRONG_SECRET = "kX9-vQ2_pL7mZ4rT8wY1nB6cF3hJ5sD0gA2eU7iO4"


@pytest.fixture(autouse=True)
def keep_test_logging(monkeypatch):
    """migrations/env.py loads alembic.ini's logging setup, which would close pytest's log
    handlers."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


@pytest.fixture
def production(app, monkeypatch):
    """The suite's app with sound production settings; a test spoils one of them."""
    for name, value in {
        "APP_ENV": "production",
        "SECRET_KEY": STRONG_SECRET,
        "BASE_URL": "https://pay.shop.example",
        "TRUSTED_PROXIES": 1,
        "REDIS_URL": None,
    }.items():
        monkeypatch.setitem(app.config, name, value)
    return app


def run_doctor(app):
    """`flask gateway doctor` against `app` (the suite's own app context would otherwise win)."""
    with app.app_context():
        return app.test_cli_runner().invoke(args=["gateway", "doctor"])


def problems(findings):
    """The messages of the findings that fail a check."""
    return [finding.message for finding in findings if finding.severity == doctor.PROBLEM]


def test_an_enabled_demo_number_is_a_problem_until_switched_off(app, brand):
    method = add_method(brand, "bkash", "01700000000", demo=True)
    add_method(brand, "nagad", "01812345678")

    found = problems(doctor.check_demo_numbers())
    result = run_doctor(app)

    assert found == [
        f"bKash 01700000000 (#{method.id}, Test Shop) is a demo number and switched on: "
        "money customers send there never reaches you."
    ]
    assert result.exit_code == 1 and "PROBLEM  no demo number enabled" in result.output
    assert f"flask gateway update-method {method.id} --disable" in result.output
    update_method(method, enabled=False)
    assert doctor.check_demo_numbers() == []


def test_doctor_ends_with_its_problem_count_in_plain_words(app, production, monkeypatch):
    # Two of the real checks, so that the count is what this test spoils and nothing else.
    monkeypatch.setattr(
        doctor,
        "CHECKS",
        (
            ("SECRET_KEY strong", doctor.check_secret_key),
            ("reverse proxies counted", doctor.check_proxies),
        ),
    )
    monkeypatch.setitem(app.config, "SECRET_KEY", DEV_SECRET)
    one = run_doctor(app)
    monkeypatch.setitem(app.config, "TRUSTED_PROXIES", 0)
    two = run_doctor(app)

    assert one.exit_code == 1 and one.output.count("PROBLEM ") == 1
    assert one.output.rstrip().endswith("Error: 1 problem found.")
    assert two.exit_code == 1 and two.output.count("PROBLEM ") == 2
    assert two.output.rstrip().endswith("Error: 2 problems found.")


@pytest.mark.parametrize(
    "secret, reason",
    [
        (DEV_SECRET, "published default"),
        ("too-short-a-secret", "fewer than 32"),
        ("ab" * 24, "repeats a few"),
    ],
)
def test_a_weak_or_default_secret_key_is_a_problem(app, production, monkeypatch, secret, reason):
    monkeypatch.setitem(app.config, "SECRET_KEY", secret)

    found = problems(doctor.check_secret_key())
    result = run_doctor(app)

    assert len(found) == 1 and reason in found[0]
    assert result.exit_code == 1 and "PROBLEM  SECRET_KEY strong" in result.output
    assert secret not in result.output


def test_a_random_secret_key_passes(production):
    assert doctor.check_secret_key() == []


def test_an_http_base_url_in_production_is_a_problem(app, production, brand, monkeypatch):
    monkeypatch.setitem(app.config, "BASE_URL", "http://pay.shop.example")
    assert problems(doctor.check_base_url())[0].startswith("BASE_URL is http://pay.shop.example")

    monkeypatch.setitem(app.config, "BASE_URL", "https://pay.shop.example")
    brand.base_url = "http://shop.example"
    db.session.commit()
    assert problems(doctor.check_base_url()) == [
        "Test Shop's origin (panel Settings) is http://shop.example: customers would pay "
        "and phones would send SMS over plain http."
    ]
    assert "PROBLEM  BASE_URL https" in run_doctor(app).output


def test_http_is_fine_outside_production(app, monkeypatch):
    monkeypatch.setitem(app.config, "BASE_URL", "http://127.0.0.1:5000")
    assert doctor.check_base_url() == [] and doctor.check_proxies() == []


@pytest.mark.parametrize(
    "hops, expected", [(0, "TRUSTED_PROXIES=0"), (3, "TRUSTED_PROXIES=3"), (1, None), (2, None)]
)
def test_an_https_deployment_must_count_its_proxies(app, production, monkeypatch, hops, expected):
    monkeypatch.setitem(app.config, "TRUSTED_PROXIES", hops)

    found = problems(doctor.check_proxies())

    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0]
        assert "PROBLEM  reverse proxies counted" in run_doctor(app).output


def test_an_unreachable_database_is_a_problem_and_its_password_stays_hidden():
    port = free_port()
    url = f"postgresql+psycopg://gateway:pa55word@127.0.0.1:{port}/shop"
    unreachable = create_app(
        {"APP_ENV": "testing", "REDIS_URL": None, "SQLALCHEMY_DATABASE_URI": url}
    )

    result = run_doctor(unreachable)

    assert result.exit_code == 1
    assert (
        f"The database postgresql+psycopg://gateway:***@127.0.0.1:{port}/shop is unreachable"
        in result.output
    )
    assert "pa55word" not in result.output
    assert "phone checking in: skipped: the database is unreachable" in result.output


def migrated_sqlite_app(path, revision):
    """An app on a SQLite file migrated up to `revision` only."""
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
            "REDIS_URL": None,
            "SQLALCHEMY_ENGINE_OPTIONS": {},
        }
    )
    with app.app_context():
        upgrade(directory=MIGRATIONS, revision=revision)
        db.engine.dispose()
    return app


def test_a_database_at_an_old_revision_is_a_problem(tmp_path):
    old = migrated_sqlite_app(tmp_path / "old.sqlite3", "0001")
    current = migrated_sqlite_app(tmp_path / "current.sqlite3", "heads")

    with old.app_context():
        found = problems(doctor.check_migrations())
        db.engine.dispose()
    with current.app_context():
        assert doctor.check_migrations() == []
        db.engine.dispose()
    result = run_doctor(old)

    assert len(found) == 1 and found[0].startswith(
        "The database schema is at revision 0001; this code expects "
    )
    assert "0001" not in found[0].split("expects")[1]
    assert result.exit_code == 1 and "flask db upgrade" in result.output


def test_a_database_the_migrations_never_touched_is_a_problem(app):
    # The suite's own database is made by create_all(): no Alembic revision at all.
    assert problems(doctor.check_migrations())[0].startswith(
        "The database schema is at revision none"
    )


def test_an_unreachable_redis_is_a_problem_degraded_to_the_sweep(app, production, monkeypatch):
    monkeypatch.setitem(app.config, "REDIS_URL", f"redis://:hunter22@127.0.0.1:{free_port()}/0")

    found = problems(doctor.check_redis())
    result = run_doctor(app)

    assert len(found) == 1 and "degraded: wake-ups wait for the sweep" in found[0]
    assert result.exit_code == 1 and "hunter22" not in result.output
    assert "workers and scheduler alive: skipped: Redis is unreachable" in result.output


def test_production_without_redis_notes_that_jobs_run_in_process(production):
    found = doctor.check_redis()

    assert [finding.severity for finding in found] == [doctor.NOTE]
    assert "run inside the web process" in found[0].message


def test_redis_without_any_worker_is_a_problem(app, production, rq_redis, monkeypatch):  # noqa: F811
    monkeypatch.setitem(app.config, "REDIS_URL", REDIS_URL)

    found = problems(doctor.check_workers())

    assert (
        found[0]
        == "No RQ worker serves maintenance, webhooks, sms, mail: webhooks, SMS or sweeps are "
        "not run."
    )
    assert "scheduler holds no lock" in found[1]


def wait_for(condition, what, seconds=60):
    """Poll `condition` until it holds (a readiness wait, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.2)


def test_a_worker_without_rqs_scheduler_is_a_problem(
    app, production, rq_redis, monkeypatch, tmp_path
):  # noqa: F811
    from rq import Worker

    monkeypatch.setitem(app.config, "REDIS_URL", REDIS_URL)
    log = open(tmp_path / "rq.log", "wb")
    # A bare `rq worker`: it serves the queues, but nobody schedules the retries due later.
    bare = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "rq"),
            "worker",
            "--url",
            REDIS_URL,
            "maintenance",
            "webhooks",
            "sms",
            "mail",
        ],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(lambda: Worker.all(connection=rq_redis), "the rq worker to register")
        found = problems(doctor.check_workers())
    finally:
        bare.terminate()
        bare.wait(20)
        log.close()

    assert len(found) == 1
    assert found[0].startswith("RQ's scheduler holds no lock for maintenance, webhooks, sms")


def test_no_paired_phone_is_a_problem(app, brand):
    assert problems(doctor.check_heartbeats()) == [
        "Test Shop has no paired phone: no SMS arrives, so no payment completes."
    ]


def test_a_phone_silent_longer_than_the_limit_is_a_problem(app, brand):
    device, _, _ = paired_device(brand)
    with freeze_time(utcnow() - timedelta(minutes=45)):
        record_heartbeat(device, {})

    found = problems(doctor.check_heartbeats())
    with freeze_time(device.last_heartbeat_at + timedelta(minutes=29)):
        recent_enough = doctor.check_heartbeats()

    assert len(found) == 1 and found[0].startswith("Test Shop's phone has not checked in since ")
    assert "(limit 30 minutes)" in found[0]
    assert recent_enough == []


def test_an_sms_to_url_forwarder_is_heard_from_by_its_texts(app, brand):
    from gateway.devices.forwarders import create_forwarder

    device, _ = create_forwarder(brand, "sms-to-url", "Till")
    assert "has not checked in ever" in problems(doctor.check_heartbeats())[0]
    device.last_sms_at = utcnow() - timedelta(minutes=5)
    db.session.commit()

    assert doctor.check_heartbeats() == []


def test_a_paired_phone_that_never_checked_in_is_a_problem(app, brand):
    paired_device(brand)

    assert "has not checked in ever" in problems(doctor.check_heartbeats())[0]


def delivery(brand, status, attempts=1, next_attempt_at=None, updated_at=None):
    """A webhook delivery row as the outbox leaves it."""
    now = utcnow()
    row = WebhookDelivery(
        brand_id=brand.id,
        event="payment.completed",
        event_id=f"evt_{uuid.uuid4().hex}",
        url="https://shop.example/hooks",
        payload="{}",
        status=status,
        attempts=attempts,
        next_attempt_at=next_attempt_at,
        created_at=now,
        updated_at=updated_at or now,
    )
    db.session.add(row)
    db.session.commit()
    return row


def test_webhooks_that_failed_in_the_last_day_are_a_problem(app, brand):
    delivery(brand, "failed", attempts=8, updated_at=utcnow() - timedelta(hours=30))
    assert doctor.check_webhooks() == []  # older than a day: already seen

    delivery(brand, "failed", attempts=8, updated_at=utcnow() - timedelta(hours=2))

    assert problems(doctor.check_webhooks()) == [
        "1 webhook deliveries failed for good in the last 24 hours."
    ]


def test_webhooks_piling_up_in_retries_are_a_problem(app, brand):
    for _ in range(doctor.RETRYING_PILE - 1):
        delivery(brand, "retrying", attempts=3, next_attempt_at=utcnow() + timedelta(minutes=30))
    assert doctor.check_webhooks() == []

    delivery(brand, "retrying", attempts=3, next_attempt_at=utcnow() + timedelta(minutes=30))

    assert problems(doctor.check_webhooks()) == [
        "10 webhook deliveries are retrying: the receiver keeps refusing them."
    ]


def test_webhooks_overdue_with_nobody_sending_are_a_problem(app, brand):
    delivery(brand, "pending", attempts=0, next_attempt_at=utcnow() - timedelta(minutes=5))
    assert doctor.check_webhooks() == []

    delivery(brand, "pending", attempts=0, next_attempt_at=utcnow() - timedelta(minutes=11))

    assert problems(doctor.check_webhooks()) == [
        "1 webhook deliveries are more than 10 minutes past due: nothing is sending them."
    ]


@pytest.fixture
def postgres_schema():
    """A fresh, empty schema in the test PostgreSQL database, dropped afterwards."""
    try:
        postgres_reachable()
    except Exception as error:  # noqa: BLE001 - any failure to connect
        unavailable("PostgreSQL", error)
    name = f"doctor_{uuid.uuid4().hex[:12]}"
    engine = create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{name}"'))
    yield name
    with engine.begin() as connection:
        connection.execute(text(f'DROP SCHEMA "{name}" CASCADE'))
    engine.dispose()


def test_a_sound_production_deployment_passes(rq_redis, postgres_schema, tmp_path):  # noqa: F811
    deployment = create_app(
        {
            "APP_ENV": "production",
            "SECRET_KEY": STRONG_SECRET,
            "BASE_URL": "https://pay.shop.example",
            "TRUSTED_PROXIES": 1,
            "REDIS_URL": REDIS_URL,
            "SQLALCHEMY_DATABASE_URI": POSTGRES_URL,
            "SQLALCHEMY_ENGINE_OPTIONS": {
                "pool_pre_ping": True,
                "connect_args": {"options": f"-csearch_path={postgres_schema}"},
            },
        }
    )
    worker = None
    with deployment.app_context():
        try:
            upgrade(directory=MIGRATIONS)
            runner = deployment.test_cli_runner()
            booted = runner.invoke(
                args=[
                    "gateway",
                    "bootstrap",
                    "--brand-name",
                    "Rahim Store",
                    "--email",
                    "owner@shop.example",
                    "--bkash",
                    "01712345678",
                ]
            )
            assert booted.exit_code == 0, booted.output
            device, _, _ = paired_device(db.session.execute(db.select(Brand)).scalar_one())
            record_heartbeat(device, {"battery_level": 80})
            # The real worker, with RQ's scheduler, on the same schema (libpq reads PGOPTIONS).
            worker = WorkerProcess(
                deployment, tmp_path, PGOPTIONS=f"-csearch_path={postgres_schema}"
            )
            wait_for(
                lambda: doctor.check_workers() == [], "the worker and its scheduler to come up"
            )

            result = runner.invoke(args=["gateway", "doctor"])
        finally:
            if worker is not None:
                worker.stop()
            db.session.remove()
            db.engine.dispose()

    assert result.exit_code == 0, result.output
    assert "PROBLEM" not in result.output and "No problems found." in result.output
    assert result.output.count("  ok  ") == len(doctor.CHECKS)
