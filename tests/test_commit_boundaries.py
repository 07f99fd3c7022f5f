"""Where each front door commits: once, its action with its audit row, and its jobs only after that
commit.

A failure after the action is made real: the database itself refuses a later write (a trigger), so
the unit of work must keep none of what came before it.
"""

from contextlib import contextmanager
from datetime import timedelta

import pyotp
import pytest
from freezegun import freeze_time
from sqlalchemy import event

from gateway.accounts.models.audit import AuditLog
from gateway.accounts.models.brand import Brand
from gateway.accounts.models.user import User
from gateway.accounts.two_factor import confirm_enrolment, start_enrolment
from gateway.clock import utcnow
from gateway.devices.models.device import Device, PairingCode
from gateway.devices.pairing import create_pairing_code
from gateway.extensions import db
from gateway.invoices.models.invoice import Invoice
from gateway.invoices.overdue import sweep_overdue_invoices
from gateway.mail.outbox import send_mail
from gateway.notifications.watch import sweep_notifications
from gateway.outbox.sweep import sweep_outbox
from gateway.payments.lifecycle import expire_due_payments
from gateway.payments.models.payment import Payment
from tests.factories import PaymentFactory, UserFactory, paired_device, reload
from tests.invoices.test_overdue import NEXT_DAY_IN_DHAKA, sent_invoice
from tests.notifications.conftest import configure
from tests.panel.conftest import PASSWORD, csrf_token, panel_client, sign_in
from tests.test_unit_of_work import trail  # noqa: F401 - the fixture
from tests.webhook_support import rq_redis  # noqa: F401 - fixture

MOBILE = "/api/mobile/v1"
SIGNED_IN_PAGE = "/panel/account/password"


@contextmanager
def refused(table, operation="INSERT", column=None):
    """The database itself refuses `operation` on `table` (a trigger) while the block runs."""
    db.session.commit()  # the test's own transaction holds no lock the DDL would wait for
    name = f"refuse_{table}"
    of = f" OF {column}" if column else ""
    with db.engine.begin() as connection:
        postgres = connection.dialect.name == "postgresql"
        if postgres:
            connection.exec_driver_sql(
                "CREATE OR REPLACE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$"
            )
            connection.exec_driver_sql(
                f"CREATE TRIGGER {name} BEFORE {operation}{of} ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION refuse_write()"
            )
        else:
            connection.exec_driver_sql(
                f"CREATE TRIGGER {name} BEFORE {operation}{of} ON {table} "
                "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
            )
    try:
        yield
    finally:
        db.session.rollback()
        with db.engine.begin() as connection:
            if postgres:
                connection.exec_driver_sql(f"DROP TRIGGER {name} ON {table}")
                connection.exec_driver_sql("DROP FUNCTION refuse_write()")
            else:
                connection.exec_driver_sql(f"DROP TRIGGER {name}")


class JobsAtCommit(list):
    """How many jobs Redis held as each commit began; `now()` is how many it holds now."""

    def __init__(self, redis):
        super().__init__()
        self.redis = redis

    def now(self):
        return len(self.redis.keys("rq:job:*"))

    def commit(self, conn):
        self.append(self.now())


@pytest.fixture
def jobs_at_commit(app, rq_redis):
    """The app enqueueing onto the test Redis, and the jobs it held as each commit began."""
    seen = JobsAtCommit(rq_redis)
    event.listen(db.engine, "commit", seen.commit)
    yield seen
    event.remove(db.engine, "commit", seen.commit)


def audit_rows():
    db.session.expire_all()
    return db.session.execute(db.select(AuditLog.action).order_by(AuditLog.id)).scalars().all()


def one_commit_after(trail, *writes):  # noqa: F811 - the fixture's value
    """Every write is sent before the first commit, and that commit is the only one."""
    assert set(writes) <= set(trail[: trail.index("COMMIT")]), trail
    assert trail.count("COMMIT") == 1, trail


def signed_out(client):
    """Whether a page for signed-in users sends this browser to sign in."""
    page = client.get(SIGNED_IN_PAGE)
    return page.status_code == 302 and page.headers["Location"].startswith("/panel/sign-in")


def failed(call):
    """The answer of a request the database failed (500), or the error a testing app propagates."""
    try:
        return call().status_code
    except Exception as error:  # noqa: BLE001 - PROPAGATE_EXCEPTIONS: the refused write itself
        assert "refused by the test" in str(error)
        return 500


# The panel's sign-in: the sign-in time and its audit row.


def test_a_sign_in_writes_its_time_and_its_audit_row_in_one_commit(app, brand, trail):
    user = UserFactory(brand=brand, role="owner")
    client = panel_client(app)
    token = csrf_token(client, "/panel/sign-in")
    trail.clear()
    answer = client.post(
        "/panel/sign-in", data={"email": user.email, "password": PASSWORD, "csrf_token": token}
    )
    assert answer.status_code == 302
    one_commit_after(trail, "UPDATE users", "INSERT audit_logs")
    assert reload(user).last_login_at is not None
    assert audit_rows() == ["sign_in"]


def test_a_refused_sign_in_audit_row_keeps_the_sign_in_time_out_too(app, brand):
    user = UserFactory(brand=brand, role="owner")
    client = panel_client(app)
    with refused("audit_logs"):
        assert failed(lambda: sign_in(client, user)) == 500
    assert reload(user).last_login_at is None
    assert audit_rows() == []
    # Nor does the browser's session name the user: nobody is signed in by a failed commit.
    assert signed_out(client)


def test_a_refused_two_factor_audit_row_leaves_the_code_unspent(app, brand):
    user = UserFactory(brand=brand, role="owner")
    with freeze_time(utcnow() - timedelta(minutes=1)):
        confirm_enrolment(user, pyotp.TOTP(secret := start_enrolment(user)).now())
    code = pyotp.TOTP(secret).now()
    client = panel_client(app)
    assert sign_in(client, user).status_code == 302
    step = "/panel/sign-in/two-factor"
    with refused("audit_logs"):
        token = csrf_token(client, step)
        assert failed(lambda: client.post(step, data={"code": code, "csrf_token": token})) == 500
    assert audit_rows() == []
    assert signed_out(client)
    # The code was not spent: the sign-in its audit row could not join never happened.
    answer = client.post(step, data={"code": code, "csrf_token": csrf_token(client, step)})
    assert answer.status_code == 302
    assert audit_rows() == ["sign_in"]


# The companion app: pairing, token refresh, heartbeats, acknowledgements, unpairing.


def pair(client, code):
    return client.post(
        f"{MOBILE}/devices",
        json={
            "pairing_code": code,
            "device_id": "phone-1",
            "device_name": "Shop phone",
            "fingerprint": "install-1",
        },
    )


def test_pairing_commits_the_spent_code_and_the_device_once(client, brand, trail):
    code = create_pairing_code(brand)
    trail.clear()
    assert pair(client, code).status_code == 201
    one_commit_after(trail, "UPDATE pairing_codes", "INSERT devices", "INSERT notifications")


def test_a_refused_pairing_keeps_neither_the_spent_code_nor_the_device(client, brand):
    code = create_pairing_code(brand)
    with refused("notifications"):  # the welcome notification, written after the device
        assert failed(lambda: pair(client, code)) == 500
    db.session.expire_all()
    assert db.session.execute(db.select(Device)).first() is None
    assert db.session.execute(db.select(PairingCode.used_at)).scalar_one() is None
    assert pair(client, code).status_code == 201  # the code is still good


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("post", "/devices/token-refreshes", "refresh"),
        ("post", "/devices/heartbeats", {"battery": 80}),
        ("post", "/notifications/acknowledgements", {"ids": [1]}),
        ("delete", "/devices/self", None),
    ],
)
def test_each_companion_app_write_commits_once(client, brand, trail, method, path, body):
    device, tokens, _ = paired_device(brand, fingerprint="install-1")
    if body == "refresh":
        body = {"refresh_token": tokens["refresh_token"], "fingerprint": "install-1"}
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    trail.clear()
    answer = getattr(client, method)(f"{MOBILE}{path}", json=body, headers=headers)
    assert answer.status_code == 200, answer.get_json()
    assert trail.count("COMMIT") == 1


def test_a_reused_refresh_token_unpairs_the_device_though_the_request_is_refused(client, brand):
    device, tokens, _ = paired_device(brand, fingerprint="install-1")
    body = {"refresh_token": tokens["refresh_token"], "fingerprint": "install-1"}
    assert client.post(f"{MOBILE}/devices/token-refreshes", json=body).status_code == 200
    again = client.post(f"{MOBILE}/devices/token-refreshes", json=body)
    assert (again.status_code, again.get_json()["code"]) == (401, "REFRESH_TOKEN_REUSED")
    assert reload(device).revoked_reason == "refresh token reused"


# The CLI: bootstrap, and a command of two services.


def test_bootstrap_commits_the_brand_its_owner_and_key_once(runner, trail):
    trail.clear()
    result = runner.invoke(args=["gateway", "bootstrap", "--password", "long enough"])
    assert result.exit_code == 0, result.output
    first = trail.index("COMMIT")
    assert {"INSERT brands", "INSERT users", "INSERT api_keys"} <= set(trail[:first])
    # Then each bootstrap step (here the demo number) commits on its own.
    assert "INSERT payment_methods" in trail[first:]
    assert trail.count("COMMIT") == 2


def test_a_refused_bootstrap_key_keeps_neither_the_brand_nor_its_owner(runner):
    with refused("api_keys"):
        result = runner.invoke(args=["gateway", "bootstrap", "--password", "long enough"])
    assert result.exit_code != 0
    db.session.expire_all()
    assert db.session.execute(db.select(Brand)).first() is None
    assert db.session.execute(db.select(User)).first() is None


def test_reset_two_factor_and_ending_the_sessions_commit_together(runner, brand):
    user = UserFactory(brand=brand, role="owner")
    with freeze_time(utcnow() - timedelta(minutes=1)):
        confirm_enrolment(user, pyotp.TOTP(start_enrolment(user)).now())
    with refused("users", "UPDATE", "session_version"):
        result = runner.invoke(args=["gateway", "reset-two-factor", "--email", user.email])
    assert result.exit_code != 0
    assert reload(user).two_factor_enabled  # the reset went with the sessions it had to end


# Jobs: one commit, and their wake-ups sent only after it.


def test_the_notification_sweep_commits_once_then_wakes_its_deliveries(
    app, brand, trail, jobs_at_commit
):
    configure(brand, channels={"phone.offline": ["telegram"]})
    device, _, _ = paired_device(brand)
    device.last_heartbeat_at = utcnow() - timedelta(hours=1)
    db.session.commit()
    trail.clear()
    jobs_at_commit.clear()
    assert sweep_notifications() == 1  # one notification raised (due from the moment it was)
    assert trail.count("COMMIT") == 1
    assert jobs_at_commit == [0]  # nothing was in Redis when the one commit began
    assert jobs_at_commit.now() == 1


def test_the_mail_sweep_wakes_due_mail_after_its_commit(app, brand, trail, jobs_at_commit):
    send_mail(brand.id, "customer@example.com", "Hello", "Text")
    db.session.commit()
    assert jobs_at_commit.now() == 1  # send_mail's own wake-up, sent after the commit above
    jobs_at_commit.redis.flushdb()  # Redis lost it: the sweep must wake the row again
    trail.clear()
    jobs_at_commit.clear()
    assert sweep_outbox() == 1
    assert trail.count("COMMIT") == 1
    assert jobs_at_commit == [0]
    assert jobs_at_commit.now() == 1


def test_the_expiry_sweep_commits_every_expiry_once_and_then_wakes_their_webhooks(
    app, brand, trail, jobs_at_commit
):
    brand.webhook_url = "https://shop.example/hooks"
    db.session.commit()
    payments = [PaymentFactory(brand=brand) for _ in range(2)]
    trail.clear()
    jobs_at_commit.clear()
    with freeze_time(utcnow() + timedelta(hours=1)):
        assert len(expire_due_payments()) == 2
    assert trail.count("COMMIT") == 1
    assert jobs_at_commit == [0]
    assert jobs_at_commit.now() == 2
    assert {reload(payment).status for payment in payments} == {"expired"}


def test_a_refused_webhook_event_keeps_every_payment_of_the_expiry_sweep_open(brand):
    brand.webhook_url = "https://shop.example/hooks"
    db.session.commit()
    payments = [PaymentFactory(brand=brand) for _ in range(2)]
    with refused("webhook_deliveries"), freeze_time(utcnow() + timedelta(hours=1)):
        with pytest.raises(Exception, match="refused by the"):
            expire_due_payments()
    assert {reload(payment).status for payment in payments} == {"created"}


def test_an_overdue_invoice_moves_only_with_its_reminder(brand, smtp_server):
    smtp_server.configure(brand)
    invoice = sent_invoice(brand)
    with refused("outbound_mail"), freeze_time(NEXT_DAY_IN_DHAKA):
        with pytest.raises(Exception, match="refused by the"):
            sweep_overdue_invoices()
    db.session.expire_all()
    assert db.session.get(Invoice, invoice.id).status == "sent"
    with freeze_time(NEXT_DAY_IN_DHAKA):
        assert sweep_overdue_invoices() == 1
    db.session.expire_all()
    assert db.session.get(Invoice, invoice.id).reminder_count == 1
