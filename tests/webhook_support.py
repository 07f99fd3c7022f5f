"""Real things webhook tests run against: a verifying HTTP receiver, the test Redis, RQ workers."""

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from tests.services import REDIS_URL, redis_client, unavailable

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 300

# Settings for sweeping workers whose receiver holds a request for as long as a test runs. A
# worker's test lease is 2 s (WorkerProcess), so that a killed worker's row is taken over quickly;
# with it a held attempt's place lapsed within 7 s and the sweep sent the webhook again, and a
# loaded machine still busy with the rest of the test saw a second request. These are production's
# lease and a timeout below the RQ job's 30 s, as in production.
HOLDING = {"WEBHOOK_LEASE_SECONDS": "60", "WEBHOOK_TIMEOUT": "25"}


class WebhookReceiver:
    """A local HTTP endpoint that checks every webhook's signature and timestamp
    (docs/spec/merchant-api.md 6.3)."""

    def __init__(self, secret, host="127.0.0.1", port=0, ssl_context=None):
        self.secret = secret
        self.received = []  # verified requests: {"headers", "raw", "json"}
        self.rejected = []  # why a request failed verification
        self.plan = []  # statuses to answer, in order; 200 once empty
        self.hold = None  # a threading.Event that requests wait for before answering
        self.arrived = threading.Condition()
        self.server = make_server(host, port, self.wsgi, threaded=True, ssl_context=ssl_context)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def port(self):
        return self.server.server_port

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/hooks"

    def verify(self, headers, raw):
        """Why this request fails verification, or None (raw body, timing-safe compare, 300 s)."""
        expected = hmac.new(self.secret.encode(), raw, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, headers.get("X-Service-Signature", "")):
            return "bad signature"
        timestamp = headers.get("X-Service-Timestamp", "")
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE:
            return "stale timestamp"
        return None

    def wsgi(self, environ, start_response):
        request = Request(environ)
        raw = request.get_data()
        reason = self.verify(request.headers, raw)
        with self.arrived:
            if reason is None:
                self.received.append(
                    {
                        "headers": dict(request.headers),
                        "raw": raw,
                        "json": json.loads(raw),
                        "client_port": environ.get("REMOTE_PORT"),
                    }
                )
            else:
                self.rejected.append(reason)
            status = (self.plan.pop(0) if self.plan else 200) if reason is None else 401
            self.arrived.notify_all()
        if self.hold is not None:
            self.hold.wait(30)
        return Response("OK" if status == 200 else "nope", status=status)(environ, start_response)

    def wait_for(self, count, timeout=20):
        """Block until `count` verified requests have arrived; False on timeout."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.received) >= count, timeout)

    def events(self):
        return [item["json"] for item in self.received]

    def close(self):
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(brand):
    """A verifying receiver holding `brand`'s webhook secret; it must never see a bad signature."""
    receiver = WebhookReceiver(brand.webhook_secret)
    yield receiver
    receiver.close()
    assert receiver.rejected == [], "the gateway sent a webhook that failed verification"


@pytest.fixture
def rq_redis(app, monkeypatch):
    """The test Redis database, empty, and the app enqueueing onto it."""
    try:
        client = redis_client()
    except Exception as error:  # noqa: BLE001 - any failure to connect
        unavailable("Redis", error)
    client.flushdb()
    monkeypatch.setitem(app.config, "REDIS_URL", REDIS_URL)
    yield client
    client.flushdb()


def drain_queues():
    """Run a real RQ worker, with its scheduler, in this process until nothing is due (freezegun
    reaches it).
    """
    from redis import Redis
    from rq import Queue, SimpleWorker

    from gateway.jobs import QUEUES

    connection = Redis.from_url(REDIS_URL)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        SimpleWorker(
            [Queue(name, connection=connection) for name in QUEUES], connection=connection
        ).work(burst=True, with_scheduler=True, logging_level="WARNING")
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
        connection.close()


class WorkerProcess:
    """`flask gateway worker [args]` in a subprocess of its own session, on the test database and
    Redis.
    """

    def __init__(self, app, tmp_path, *args, **settings):
        database = app.config["SQLALCHEMY_DATABASE_URI"]
        env = {
            **os.environ,
            "APP_ENV": "testing",
            "TEST_DATABASE_URL": database,
            "DATABASE_URL": database,
            "REDIS_URL": REDIS_URL,
            "FLASK_APP": "app.py",
            "PYTHONUNBUFFERED": "1",
            "SWEEP_INTERVAL": "1",
            "WEBHOOK_LEASE_SECONDS": "2",
            **settings,
        }
        self.log_path = tmp_path / f"worker-{time.monotonic_ns()}.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "flask", "gateway", "worker", *args],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self):
        """SIGKILL the worker and everything it started (its scheduler), as a crash would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        """A warm shutdown, then a kill if it does not come."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        try:  # the scheduler child may outlive a killed parent; it is in the same process group
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def output(self):
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def start_worker(app, rq_redis, tmp_path):
    """Start real RQ worker subprocesses; every one is stopped after the test."""
    workers = []

    def start(*args, **settings):
        worker = WorkerProcess(app, tmp_path, *args, **settings)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


# A trickling answer: headers left open, or a body far longer than the drip will ever send.
TRICKLED_HEADS = pytest.mark.parametrize(
    "head",
    [b"HTTP/1.1 200 OK\r\nX-Slow: ", b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"],
    ids=["headers", "body"],
)


class TricklingServer:
    """Answers every request with `head`, then one byte every 50 ms (`drips` of them, 8 s by
    default: never slow enough to trip a read timeout), then hangs up."""

    def __init__(self, head, drips=160):
        self.head, self.drips = head, drips
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.stopped = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hooks"

    def serve(self):
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:  # the 0.1 s poll, or the listener closed
                continue
            threading.Thread(target=self.trickle, args=(connection,), daemon=True).start()

    def trickle(self, connection):
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(self.head)
                for _ in range(self.drips):
                    if self.stopped.wait(0.05):
                        return
                    connection.sendall(b"x")
            except OSError:  # the sender hung up
                return

    def close(self):
        self.stopped.set()
        self.listener.close()


@pytest.fixture
def trickling():
    """Start TricklingServers (`head`, `drips`); every one is closed after the test."""
    started = []

    def start(head, drips=160):
        started.append(TricklingServer(head, drips))
        return started[-1]

    yield start
    for server in started:
        server.close()


def timed(call, *args):
    """(what `call(*args)` returned, the seconds it took)."""
    started = time.monotonic()
    result = call(*args)
    return result, time.monotonic() - started
