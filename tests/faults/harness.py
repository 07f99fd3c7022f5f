"""Real processes for the fault suite: a Redis of its own, gunicorn, `flask gateway worker`s, and a
shop that pays over HTTP (merchant API, checkout form, the phone's SMS forward) so that every fault
meets the real stack.

Everything listens on loopback ports picked free; nothing here touches the machine's own Redis.
"""

import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import uuid
from decimal import Decimal
from pathlib import Path

import requests

from tests.local_servers import free_port

ROOT = Path(__file__).resolve().parents[2]
PAUSE = 0.05
# Production settings, but a retry schedule 50 times shorter (1 min → 1.2 s), short leases and a
# sweep every second, so that a whole fault plays out in seconds.
FAST_RECOVERY = {"SWEEP_INTERVAL": "1", "WEBHOOK_LEASE_SECONDS": "3", "WEBHOOK_RETRY_SCALE": "0.02"}
WEB_APP_NAME, WORKER_APP_NAME = "gw-fault-web", "gw-fault-worker"
# Seconds gunicorn's workers get to import the app and answer /healthz: a few seconds on an idle
# machine, but three imports at once took over 30 s at a load average of 12 on two cores.
BOOT_PATIENCE = 120
# One secret for the stack and the test process, so that what the test creates (a pairing code) is
# valid there.
STACK_SECRET = secrets.token_hex(32)


def wait_until(predicate, timeout, pause=0.1):
    """Poll `predicate` until it is true (True) or `timeout` s have passed (False)."""
    stop = time.monotonic() + timeout
    while time.monotonic() < stop:
        if predicate():
            return True
        time.sleep(pause)
    return bool(predicate())


def with_app_name(database_url, name):
    """The database URL with an application_name, so the suite can find (and terminate) these
    connections.
    """
    return f"{database_url}{'&' if '?' in database_url else '?'}application_name={name}"


class Process:
    """A subprocess in its own session, its output in a log file; killed with its whole process
    group.
    """

    def __init__(self, args, log_path, env=None):
        self.args, self.log_path, self.env = args, log_path, env
        with open(log_path, "ab") as log:
            self.popen = subprocess.Popen(
                args,
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def signal_group(self, signum):
        try:
            os.killpg(self.popen.pid, signum)
        except ProcessLookupError:
            pass

    def kill(self):
        """SIGKILL the process and everything it started, as a crash would."""
        self.signal_group(signal.SIGKILL)
        self.popen.wait(10)

    def stop(self, grace=10):
        """SIGTERM, then SIGKILL for whatever is left of the group."""
        if self.alive():
            self.signal_group(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        self.signal_group(signal.SIGKILL)
        self.popen.wait(10)

    def output(self, tail=4000):
        return self.log_path.read_text(errors="replace")[-tail:]


def stack_env(database_url, redis_url, base_url, **extra):
    """The environment of a production-like gateway process."""
    return {
        **os.environ,
        "APP_ENV": "production",
        "SECRET_KEY": STACK_SECRET,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "BASE_URL": base_url,
        "ALLOW_PRIVATE_CALLBACKS": "true",
        "SESSION_COOKIE_SECURE": "false",
        "FLASK_APP": "app.py",
        "PYTHONUNBUFFERED": "1",
        **FAST_RECOVERY,
        **extra,
    }


class Gunicorn:
    """gunicorn with 3 sync workers, as a production install runs the web process."""

    def __init__(self, directory, database_url, redis_url, workers=3, **settings):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = stack_env(with_app_name(database_url, WEB_APP_NAME), redis_url, self.url, **settings)
        self.process = Process(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--timeout",
                "30",
                "--graceful-timeout",
                "5",
                "app:app",
            ],
            Path(directory) / "gunicorn.log",
            env,
        )
        if not wait_until(self.healthy, BOOT_PATIENCE):
            self.process.stop()  # the fixture never yields it: nothing else would stop it
            raise AssertionError(self.process.output())

    def healthy(self):
        try:
            return requests.get(f"{self.url}/healthz", timeout=2).status_code < 500
        except requests.RequestException:
            return False

    def stop(self):
        self.process.stop()


class Workers:
    """`flask gateway worker` processes, restarted when one exits (as systemd's Restart=always
    would).
    """

    def __init__(self, directory, database_url, redis_url, base_url):
        self.directory = Path(directory)
        self.env = stack_env(with_app_name(database_url, WORKER_APP_NAME), redis_url, base_url)
        self.processes, self.killed = [], 0
        self.stopping = threading.Event()
        self.supervisor = threading.Thread(target=self.supervise, daemon=True)
        self.supervisor.start()

    def start(self, count=1):
        for _ in range(count):
            self.processes.append(self.spawn())
        return self.processes[-count:]

    def spawn(self):
        log = self.directory / f"worker-{len(self.processes)}-{time.monotonic_ns()}.log"
        return Process(
            [sys.executable, "-m", "flask", "gateway", "worker", "--log-level", "WARNING"],
            log,
            self.env,
        )

    def supervise(self):
        while not self.stopping.wait(0.5):
            for index, process in enumerate(list(self.processes)):
                if not process.alive() and not self.stopping.is_set():
                    process.signal_group(signal.SIGKILL)  # an orphaned scheduler child, if any
                    self.processes[index] = self.spawn()

    def kill(self, process):
        """SIGKILL one worker (and its scheduler child) mid-whatever; the supervisor starts
        another."""
        self.killed += 1
        process.kill()

    def stop(self):
        self.stopping.set()
        self.supervisor.join(5)
        for process in self.processes:
            process.stop(grace=3)

    def output(self):
        return "\n".join(
            path.read_text(errors="replace")[-3000:]
            for path in sorted(self.directory.glob("worker-*"))
        )


CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
IN_PROGRESS_PATIENCE = (
    15  # seconds a client retries a key still "in progress" (its first request may be dead)
)


def in_progress(response):
    """Whether a 409 is IDEMPOTENCY_IN_PROGRESS (the retry may go on) rather than a real
    conflict."""
    try:
        return response.json().get("code") == "IDEMPOTENCY_IN_PROGRESS"
    except ValueError:
        return False


class Shop:
    """A merchant, its customers and its phone, over HTTP: every answer the gateway gives is
    recorded.
    """

    # A real phone keeps a text until the gateway acknowledges it, and a careful merchant retries;
    # the cap only turns a gateway that never recovers into a failure instead of a hang. Six tries
    # (3 s of backoff) were shorter than a loaded machine's run of killed connections when the
    # terminator ends every connection each 0.25 s: ten give 9 s.
    def __init__(
        self, base_url, api_key, method_id, aes_key, device_token, callback_url, retries=10
    ):
        self.base_url, self.method_id, self.aes_key = base_url, method_id, aes_key
        self.api = {"Authorization": f"Bearer {api_key}"}
        self.phone = {"Authorization": f"Bearer {device_token}"}
        self.callback_url, self.retries = callback_url, retries
        # (method, path, status, seconds, monotonic start) of every answer; no answer at all is
        # status None
        self.answers = []
        self.lock = threading.Lock()
        # The phone's bKash balance: each credit's text continues it (gateway/sms/balance_chain.py),
        # and like a real phone it forwards one text at a time, in the order its balance says.
        self.wallet = threading.Lock()
        self.balance = Decimal("1000.00")

    def server_errors(self):
        """Every 5xx answer (and every request that got no answer at all)."""
        return [answer for answer in self.answers if answer[2] is None or answer[2] >= 500]

    def send(self, session, method, path, **kwargs):
        """One request, retried as a careful client would (same body, same Idempotency-Key) after a
        5xx, and after a 409 IDEMPOTENCY_IN_PROGRESS for up to IN_PROGRESS_PATIENCE s (the first try
        may have died)."""
        patience = time.monotonic() + IN_PROGRESS_PATIENCE
        failures = 0
        while True:
            started = time.monotonic()
            try:
                response = session.request(
                    method, self.base_url + path, timeout=15, allow_redirects=False, **kwargs
                )
                status = response.status_code
            except requests.RequestException:
                response, status = None, None
            with self.lock:
                self.answers.append(
                    (
                        method,
                        re.sub(r"/[0-9a-f-]{20,}|/[A-Za-z0-9_-]{30,}", "/…", path),
                        status,
                        time.monotonic() - started,
                        started,
                    )
                )
            if status == 409 and in_progress(response) and time.monotonic() < patience:
                time.sleep(0.5)
                continue
            if status is not None and status < 500:
                return response
            failures += 1
            if failures >= self.retries:
                raise AssertionError(f"{method} {path} kept failing: {self.server_errors()[-3:]}")
            time.sleep(0.2 * failures)

    def pay(self, reference):
        """Create a payment, claim it at checkout with a fresh TrxID, forward the bKash SMS; returns
        its id.
        """
        from tests.factories import bkash_text, sms_message

        session = requests.Session()
        created = self.send(
            session,
            "POST",
            "/api/v1/payments",
            headers={**self.api, "Idempotency-Key": reference},
            json={
                "amount": "500.00",
                "currency": "BDT",
                "reference": reference,
                "callback_url": self.callback_url,
            },
        )
        assert created.status_code == 201, created.text
        payment = created.json()["data"]
        page_path = "/checkout/" + payment["checkout_url"].rsplit("/", 1)[1]
        page = self.send(session, "GET", page_path)
        assert page.status_code == 200, page.text[:300]
        trx_id = uuid.uuid4().hex[:10].upper()
        claimed = self.send(
            session,
            "POST",
            page_path + "/claim",
            data={
                "csrf_token": CSRF_FIELD.search(page.text).group(1),
                "method_id": self.method_id,
                "trx_id": trx_id,
            },
        )
        assert claimed.status_code == 303, claimed.text[:300]
        with self.wallet:
            self.balance += Decimal("500.00")
            text = bkash_text(trx_id=trx_id, balance=f"{self.balance:.2f}")
            forwarded = self.send(
                session,
                "POST",
                "/api/mobile/v1/sms",
                headers=self.phone,
                json={"messages": [sms_message(self.aes_key, text)]},
            )
        assert forwarded.status_code == 200, forwarded.text
        return payment["payment_id"]

    def pay_many(self, references, threads=3):
        """Pay each reference, `threads` customers at a time; returns the payment ids in order."""
        results, errors = {}, []

        def customer(batch):
            for reference in batch:
                try:
                    results[reference] = self.pay(reference)
                except Exception as error:  # noqa: BLE001 - reported by the test
                    errors.append(f"{reference}: {error}")

        batches = [references[index::threads] for index in range(threads)]
        running = [threading.Thread(target=customer, args=(batch,)) for batch in batches]
        for thread in running:
            thread.start()
        for thread in running:
            thread.join(120)
        assert errors == [], errors[:3]
        return [results[reference] for reference in references]
