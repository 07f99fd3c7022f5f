"""`flask gateway doctor`: each problem it knows, provoked for real, its fixes run as printed on a
deployment of this checkout, and a sound production deployment passing.
"""

import logging.config
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

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
# A test on databases of its own (a SQLite file, a PostgreSQL schema or database, an unreachable
# address) or on none, whatever engine the suite tests: the SQLite pass runs it alone.
OWN_DATABASE = pytest.mark.engine_independent


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
        assert_runnable(app, doctor.check_proxies()[0].fix)
        assert "TRUSTED_PROXIES=1 in /etc/gateway/gateway.env" in doctor.check_proxies()[0].fix


@OWN_DATABASE
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


def not_a_database(path):
    """A file where the SQLite database should be that is something else (or damaged)."""
    path.parent.mkdir()
    path.write_bytes(b"not a SQLite database " * 100)


@OWN_DATABASE
@pytest.mark.parametrize("deployed", [False, True])
@pytest.mark.parametrize(
    "spoil, advice",
    [
        (lambda path: None, "Create the folder {folder}, writable by {owner}, or set DATABASE_URL"),
        (
            not_a_database,
            "{path} is not a SQLite database (damaged, or another file): restore it from a backup",
        ),
    ],
    ids=["missing folder", "not a database"],
)
def test_an_unusable_sqlite_file_gets_sqlite_advice(tmp_path, monkeypatch, spoil, advice, deployed):
    path = tmp_path / "instance" / "gateway.sqlite3"
    spoil(path)
    if deployed:
        monkeypatch.setenv("GATEWAY_ENV", doctor.ENV_FILE)
    app = create_app(
        {
            "APP_ENV": "testing",
            "REDIS_URL": None,
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}",
            "SQLALCHEMY_ENGINE_OPTIONS": {},
        }
    )

    result = run_doctor(app)
    with app.app_context():
        db.engine.dispose()

    owner = "the gateway's user (gateway)" if deployed else "the user running the gateway"
    assert result.exit_code == 1
    assert f"database reachable: The SQLite database {path} cannot be opened" in result.output
    assert advice.format(folder=path.parent, path=path, owner=owner) in result.output
    assert "postgresql" not in result.output
    assert ("/etc/gateway/gateway.env" in result.output) is deployed


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


@OWN_DATABASE
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


def test_an_unreachable_redis_on_a_unix_socket_is_named_by_its_path(
    app, production, monkeypatch, tmp_path
):
    socket = tmp_path / "redis.sock"
    monkeypatch.setitem(app.config, "REDIS_URL", f"unix://:hunter22@{socket}")

    found = problems(doctor.check_redis())

    assert found[0].startswith(f"Redis at {socket} is unreachable (ConnectionError)")
    assert "hunter22" not in found[0]


def test_production_without_redis_notes_that_jobs_run_in_process(production):
    found = doctor.check_redis()

    assert [finding.severity for finding in found] == [doctor.NOTE]
    assert "run inside the web process" in found[0].message


def test_redis_without_any_worker_is_a_problem(app, production, rq_redis, monkeypatch):  # noqa: F811
    monkeypatch.setitem(app.config, "REDIS_URL", REDIS_URL)

    findings = doctor.check_workers()
    found = problems(findings)

    for finding in findings:  # the unit's real name: gateway-worker@.service is a template
        assert_runnable(app, finding.fix)
        assert "systemctl enable --now gateway-worker@1" in commands(finding.fix)
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
        [finding] = doctor.check_workers()
        found = problems([finding])
    finally:
        bare.terminate()
        bare.wait(20)
        log.close()

    assert len(found) == 1
    assert found[0].startswith("RQ's scheduler holds no lock for maintenance, webhooks, sms")
    assert_runnable(app, finding.fix)
    assert "systemctl enable --now gateway-worker@1" in commands(finding.fix)


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
        delivery(brand, "pending", attempts=3, next_attempt_at=utcnow() + timedelta(minutes=30))
    assert doctor.check_webhooks() == []

    delivery(brand, "pending", attempts=3, next_attempt_at=utcnow() + timedelta(minutes=30))

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


@OWN_DATABASE
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


# Every fix doctor prints is a command that works as printed on the README's deployment: the
# wrapper deploy/gateway-flask as the services' user, and systemctl on the units in deploy/systemd.
WRAPPER = ROOT / "deploy" / "gateway-flask"
SYSTEMD = ROOT / "deploy" / "systemd"
DEPLOYMENT_DOC = (ROOT / "docs" / "deployment.md").read_text()
AS_SERVICE_USER = "sudo -u gateway "
SETTING = re.compile(r"[Ss]et (\w+)=(\S+) in (\S+) and restart the services")


def fix_of(output, title):
    """The fix doctor printed under its PROBLEM line for `title`."""
    lines = output.splitlines()
    for number, line in enumerate(lines):
        if line.startswith(f"  PROBLEM  {title}:"):
            fix = lines[number + 1].strip()
            assert fix.startswith("fix: "), output
            return fix.removeprefix("fix: ")
    pytest.fail(f"no problem {title!r} in:\n{output}")


def commands(fix):
    """The commands a fix names, each between backticks."""
    return re.findall(r"`([^`]+)`", fix)


def assert_systemctl(command):
    """A systemctl command on the kit's units (or the services the deployment installs) that
    systemd would run: a template unit by its instance, a glob only where it acts on running units.
    """
    words = shlex.split(command)
    assert words[0] == "systemctl" and len(words) >= 3, command
    verb, units = words[1], words[2:]
    if verb == "enable":
        assert units[0] == "--now", command  # enabled and started, as docs/deployment.md does
        verb, units = "start", units[1:]
    assert verb in {"start", "stop", "restart", "status"} and units, command
    for unit in units:
        name = unit.removesuffix(".service")
        if name in {"postgresql", "redis-server"}:
            assert "systemctl enable --now postgresql redis-server" in DEPLOYMENT_DOC
            continue
        template, at, instance = name.partition("@")
        if not at:
            assert (SYSTEMD / f"{name}.service").is_file(), command
            continue
        assert (SYSTEMD / f"{template}@.service").is_file(), command
        if instance == "*":
            # A glob matches loaded units only: it can stop or restart workers, never start one.
            assert verb in {"stop", "restart", "status"}, command
        else:
            assert re.fullmatch(r"[A-Za-z0-9_.-]+", instance), command


def assert_wrapper_command(app, command, env_file=doctor.ENV_FILE):
    """`sudo -u gateway [GATEWAY_ENV=…] <checkout>/deploy/gateway-flask <a real flask command>`."""
    assert command.startswith(AS_SERVICE_USER), command
    words = shlex.split(command.removeprefix(AS_SERVICE_USER))
    if env_file != doctor.ENV_FILE:
        assert words.pop(0) == f"GATEWAY_ENV={env_file}", command
    assert words[0] == str(WRAPPER), command
    names = [word for word in words[1:] if not word.startswith("-")][:2]
    with app.app_context():
        assert app.test_cli_runner().invoke(args=[*names, "--help"]).exit_code == 0, command


def assert_runnable(app, fix, env_file=doctor.ENV_FILE):
    """Each command of a fix is a systemctl command of the kit, the wrapper, or the secret maker."""
    for command in commands(fix):
        if command.startswith("systemctl "):
            assert_systemctl(command)
        elif command == doctor.NEW_SECRET:
            continue
        else:
            assert_wrapper_command(app, command, env_file)


@OWN_DATABASE
@pytest.mark.parametrize(
    "command",
    [
        "systemctl start gateway-worker.service",  # the unit: there is none by that name
        "systemctl enable --now 'gateway-worker@*'",  # a glob starts nothing
        "systemctl start gateway-worker@",
        "systemctl enable gateway-web",  # enabled but not started
        "systemctl start nginx-gateway",
    ],
)
def test_a_wrong_systemctl_command_is_caught(command):
    with pytest.raises(AssertionError):
        assert_systemctl(command)


class Deployment:
    """This checkout deployed as the README says: the environment file deploy/make_env_file.py
    writes, a PostgreSQL database of its own, every command through deploy/gateway-flask.
    """

    def __init__(self, env_file, database_url):
        self.env_file = env_file
        self.database_url = database_url
        self.processes = []

    def settings(self):
        """The environment file's NAME=value lines."""
        return dict(
            line.split("=", 1)
            for line in self.env_file.read_text().splitlines()
            if line and not line.startswith("#")
        )

    def set(self, name, value):
        """Change one setting in the environment file, as the operator would by hand."""
        settings = {**self.settings(), name: value}
        self.env_file.write_text("".join(f"{key}={val}\n" for key, val in settings.items()))

    def environ(self):
        """A clean shell's environment: nothing of the suite's own settings leaks in."""
        return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")}

    def flask(self, *args):
        """`deploy/gateway-flask <args>` with GATEWAY_ENV naming this deployment's file."""
        return subprocess.run(
            [str(WRAPPER), *args],
            env={**self.environ(), "GATEWAY_ENV": str(self.env_file)},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def doctor(self):
        """`deploy/gateway-flask gateway doctor`'s output (stdout and stderr)."""
        result = self.flask("gateway", "doctor")
        return result.stdout + result.stderr

    def run_fix(self, command, log=None):
        """Run a printed wrapper command as printed, from another folder, but as this user: the
        test cannot become `gateway`; in the background when given a log file.
        """
        assert command.startswith(AS_SERVICE_USER), command
        shell = ["sh", "-c", command.removeprefix(AS_SERVICE_USER)]
        if log is None:
            return subprocess.run(
                shell, env=self.environ(), cwd="/", capture_output=True, text=True, timeout=120
            )
        process = subprocess.Popen(
            shell,
            env=self.environ(),
            cwd="/",
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def app(self):
        """An app on this deployment's database and SECRET_KEY, to do what a phone would."""
        return create_app(
            {
                "APP_ENV": "testing",
                "SECRET_KEY": self.settings()["SECRET_KEY"],
                "SQLALCHEMY_DATABASE_URI": self.database_url.replace(
                    "postgresql://", "postgresql+psycopg://"
                ),
                "REDIS_URL": None,
            }
        )

    def stop(self):
        """Stop what a fix started in the background."""
        while self.processes:
            process = self.processes.pop()
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(10)


@contextmanager
def deployed_checkout(folder):
    """This checkout deployed in production on a PostgreSQL database of its own, dropped after."""
    import psycopg

    try:
        postgres_reachable()
    except Exception as error:  # noqa: BLE001 - any failure to connect
        unavailable("PostgreSQL", error)
    dsn = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    server, own = dsn.split("?", 1)[0].rsplit("/", 1)
    name = f"{own}_doctor_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    env_file = folder / "etc" / "gateway.env"
    written = subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "make_env_file.py"), str(env_file)],
        env={
            "PATH": os.environ["PATH"],
            "BASE_URL": "https://pay.shop.example",
            "DATABASE_URL": f"{server}/{name}",
            "REDIS_URL": REDIS_URL,
        },
        capture_output=True,
        text=True,
    )
    assert written.returncode == 0, written.stderr
    deployed = Deployment(env_file, f"{server}/{name}")
    try:
        yield deployed
    finally:
        deployed.stop()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
            connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def deployment(tmp_path):
    """A fresh deployment: an empty database, no migration run."""
    with deployed_checkout(tmp_path) as deployed:
        yield deployed


@pytest.fixture(scope="module")
def upgraded_deployment(tmp_path_factory):
    """One deployment with its schema upgraded, shared by the tests that spoil one part of it
    (each puts back what it spoils)."""
    with deployed_checkout(tmp_path_factory.mktemp("deployment")) as deployed:
        upgrade = deployed.flask("db", "upgrade")
        assert upgrade.returncode == 0, upgrade.stderr
        yield deployed


# A deployment is on PostgreSQL whatever engine the suite tests: the SQLite pass runs these alone.
DEPLOYED = OWN_DATABASE


def previous_revision():
    """The revision before the code's head: a database one migration behind."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(MIGRATIONS)
    return scripts.get_revision(scripts.get_current_head()).down_revision


@DEPLOYED
def test_a_schema_one_migration_behind_is_fixed_by_the_printed_upgrade(deployment):
    behind = previous_revision()
    assert deployment.flask("db", "upgrade", behind).returncode == 0

    before = deployment.doctor()
    fix = fix_of(before, "migrations current")
    [stop, upgrade, restart] = commands(fix)
    assert_systemctl(stop) and stop == "systemctl stop 'gateway-worker@*'"
    assert_systemctl(restart)
    assert upgrade == (
        f"sudo -u gateway GATEWAY_ENV={deployment.env_file} {WRAPPER} db upgrade"
    )  # not a bare `flask db upgrade`, which upgrades a new SQLite file in the install folder
    ran = deployment.run_fix(upgrade)
    after = deployment.doctor()

    assert f"schema is at revision {behind}" in before
    assert ran.returncode == 0, ran.stderr
    assert "  ok       migrations current" in after and "migrations current:" not in after


@DEPLOYED
def test_no_worker_is_fixed_by_the_printed_worker_unit_or_command(
    app, upgraded_deployment, rq_redis, tmp_path
):  # noqa: F811
    deployment = upgraded_deployment
    before = deployment.doctor()
    unserved = fix_of(before, "workers and scheduler alive")
    [unit, command] = commands(unserved)
    assert unit == "systemctl enable --now gateway-worker@1"
    assert_systemctl(unit)
    assert "deploy/systemd/gateway-worker@.service" in unserved
    assert (SYSTEMD / "gateway-worker@.service").is_file()
    assert "gateway-worker.service" not in before
    assert command == f"sudo -u gateway GATEWAY_ENV={deployment.env_file} {WRAPPER} gateway worker"
    try:
        with open(tmp_path / "worker.log", "wb") as log:
            deployment.run_fix(command, log=log)
        wait_for(lambda: doctor.check_workers() == [], "the printed worker to serve")
        after = deployment.doctor()
    finally:
        deployment.stop()

    assert "  ok       workers and scheduler alive" in after, after


@DEPLOYED
def test_the_data_fixes_doctor_prints_work_as_printed(upgraded_deployment):
    from gateway.devices.pairing import pair_device

    deployment = upgraded_deployment
    booted = deployment.flask(
        "gateway",
        "bootstrap",
        "--brand-name",
        "Rahim Store",
        "--email",
        "owner@shop.example",
        "--bkash",
        "01712345678",
    )
    assert booted.returncode == 0, booted.stderr
    shop = deployment.app()
    with shop.app_context():
        brand = db.session.execute(db.select(Brand)).scalar_one()
        demo_id = add_method(brand, "bkash", "01700000000", demo=True).id
        db.session.remove()
        db.engine.dispose()

    before = deployment.doctor()
    [add, disable] = commands(fix_of(before, "no demo number enabled"))
    pair_code = commands(fix_of(before, "phone checking in"))[0]
    assert add.endswith("gateway add-method --provider bkash --number 01XXXXXXXXX")
    assert disable.endswith(f"gateway update-method {demo_id} --disable")
    added = deployment.run_fix(add.replace("01XXXXXXXXX", "01812345678"))
    disabled = deployment.run_fix(disable)
    paired = deployment.run_fix(pair_code)
    code = paired.stdout.strip().splitlines()[-1]
    with shop.app_context():
        device, _, _ = pair_device(
            {"pairing_code": code, "device_id": "phone-1", "device_name": "Counter phone"}
        )
        record_heartbeat(device, {"battery_level": 80})
        db.session.remove()
        db.engine.dispose()
    after = deployment.doctor()

    assert "Rahim Store has no paired phone" in before
    assert added.returncode == 0 and "Added payment method" in added.stdout, added.stderr
    assert disabled.returncode == 0 and "disabled" in disabled.stdout, disabled.stderr
    assert paired.returncode == 0 and re.fullmatch(r"\d{6}", code), paired.stdout
    assert "  ok       no demo number enabled" in after, after
    assert "  ok       phone checking in" in after, after


def closed_port_url(url):
    """The same address on a loopback port nothing listens on."""
    parts = urlsplit(url)
    return parts._replace(netloc=f"{parts.netloc.rsplit(':', 1)[0]}:{free_port()}").geturl()


# How each setting is spoilt, and the check that must then fail.
SPOILT = {
    "BASE_URL": (lambda url: "http://pay.shop.example", "BASE_URL https"),
    "TRUSTED_PROXIES": (lambda hops: "3", "reverse proxies counted"),
    "REDIS_URL": (closed_port_url, "Redis reachable"),
    "DATABASE_URL": (closed_port_url, "database reachable"),
}


# The database apart: while it is down, doctor skips the checks that read it (BASE_URL's too).
@DEPLOYED
@pytest.mark.parametrize("names", [("BASE_URL", "TRUSTED_PROXIES", "REDIS_URL"), ("DATABASE_URL",)])
def test_the_settings_doctor_names_are_fixed_where_and_as_it_says(app, upgraded_deployment, names):
    deployment = upgraded_deployment
    right = {name: deployment.settings()[name] for name in names}
    for name in names:
        deployment.set(name, SPOILT[name][0](right[name]))
    try:
        before = deployment.doctor()
        for name in names:
            fix = fix_of(before, SPOILT[name][1])
            assert_runnable(app, fix, str(deployment.env_file))
            assert "systemctl restart gateway-web 'gateway-worker@*'" in commands(fix)
            setting = SETTING.search(fix)
            if setting:  # the value to set is in the fix; the placeholder domain is the shop's
                assert setting[1] == name and setting[3] == str(deployment.env_file)
                deployment.set(name, setting[2].replace("your.domain", "pay.shop.example"))
            else:  # "set NAME right": the operator's own address
                assert f"set {name} right in {deployment.env_file}" in fix
                deployment.set(name, right[name])
        after = deployment.doctor()
    finally:
        for name, value in right.items():
            deployment.set(name, value)

    for name in names:
        assert f"  ok       {SPOILT[name][1]}" in after, after


def test_the_secret_key_fix_makes_a_key_doctor_accepts(app, production, monkeypatch):
    monkeypatch.setitem(app.config, "SECRET_KEY", DEV_SECRET)
    [finding] = doctor.check_secret_key()
    assert_runnable(app, finding.fix)
    [make, restart] = commands(finding.fix)

    made = subprocess.run(make, shell=True, capture_output=True, text=True, check=True)
    monkeypatch.setitem(app.config, "SECRET_KEY", made.stdout.strip())

    assert f"SECRET_KEY to it in {doctor.ENV_FILE}" in finding.fix
    assert restart == doctor.RESTART
    assert doctor.check_secret_key() == []


def test_every_fix_in_production_is_a_command_of_the_deployment(
    app, production, brand, monkeypatch
):
    add_method(brand, "bkash", "01700000000", demo=True)
    delivery(brand, "pending", attempts=0, next_attempt_at=utcnow() - timedelta(minutes=11))
    monkeypatch.setitem(app.config, "REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    findings = [
        *doctor.check_demo_numbers(),
        *doctor.check_migrations(),
        *doctor.check_redis(),
        *doctor.check_heartbeats(),
        *doctor.check_webhooks(),
    ]
    monkeypatch.setitem(app.config, "REDIS_URL", None)
    findings += doctor.check_redis()  # the note: jobs in the web process
    monkeypatch.setattr(doctor, "CHECKS", (("broken", lambda: 1 / 0),))
    [(_, broken)] = doctor.run_checks()

    fixes = [finding.fix for finding in findings + broken]
    assert len(fixes) == 7 and all(commands(fix) for fix in fixes)
    for fix in fixes:
        assert_runnable(app, fix)
        assert "`flask " not in fix and "gateway-worker.service" not in fix
