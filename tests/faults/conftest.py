"""The fault suite's stack: its own Redis and gunicorn per module, workers and a shop per test
(PostgreSQL only).
"""

import uuid

import pytest
import requests

from gateway.devices.pairing import create_pairing_code
from tests.conftest import ENGINE
from tests.factories import PaymentMethodFactory
from tests.faults.harness import STACK_SECRET, Gunicorn, Shop, Workers
from tests.redis_server import RedisServer
from tests.services import POSTGRES_URL
from tests.webhook_support import receiver  # noqa: F401 - fixture

SKIP_REASON = (
    "the fault suite runs once, in the PostgreSQL pass (TEST_DB=postgres): it faults a "
    "production-like stack (gunicorn, RQ workers) on PostgreSQL"
)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/faults/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.slow)
            if ENGINE != "postgres":
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


@pytest.fixture(scope="module")
def fault_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def redis_server():
    """A redis-server of the suite's own (never the machine's), killed after the module."""
    server = RedisServer().start()
    yield server
    server.kill()


@pytest.fixture(scope="module")
def gunicorn(app, fault_dir, redis_server):
    """gunicorn serving the gateway in production mode on the test PostgreSQL and the suite's
    Redis."""
    server = Gunicorn(fault_dir, POSTGRES_URL, redis_server.url)
    yield server
    server.stop()


@pytest.fixture
def workers(fault_dir, redis_server, gunicorn):
    """Supervised `flask gateway worker` processes; none started until the test asks."""
    started = Workers(fault_dir, POSTGRES_URL, redis_server.url, gunicorn.url)
    yield started
    started.stop()


@pytest.fixture
def shop(app, brand, make_key, gunicorn, receiver, redis_server, monkeypatch):
    """The brand's merchant, customers and paired phone, paying through gunicorn; webhooks to
    `receiver`.
    """
    monkeypatch.setitem(app.config, "SECRET_KEY", STACK_SECRET)
    if redis_server.process.poll() is not None:  # a test that failed with Redis killed left it down
        redis_server.start()
    method = PaymentMethodFactory(brand=brand, number="01712345678")
    paired = requests.post(
        f"{gunicorn.url}/api/mobile/v1/devices",
        timeout=10,
        json={  # tokens signed by gunicorn
            "pairing_code": create_pairing_code(brand),
            "device_id": uuid.uuid4().hex,
            "device_name": "Shop phone",
            "fingerprint": "install-1",
            "app_version": "1.0.0",
            "platform": "android",
        },
    )
    assert paired.status_code == 201, paired.text
    device = paired.json()["data"]
    api_key = make_key(brand)["Authorization"].removeprefix("Bearer ")
    return Shop(
        gunicorn.url, api_key, method.id, device["aes_key"], device["access_token"], receiver.url
    )
