"""A throwaway `redis-server` of the test's own on a free loopback port, stopped and started as a
fault would.
"""

import shutil
import subprocess
import threading

import pytest
from redis import Redis
from redis.exceptions import RedisError

from tests.local_servers import free_port


class RedisServer:
    """One redis-server without persistence: every start is an empty Redis, as after a crash with no
    snapshot.
    """

    def __init__(self, port=None):
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self):
        """Start it and wait until it answers a PING."""
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client, pause = Redis.from_url(self.url, socket_connect_timeout=1), threading.Event()
        for _ in range(100):
            try:
                client.ping()
                return self
            except RedisError:
                pause.wait(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def kill(self):
        """SIGKILL it: whatever it held is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def client(self):
        return Redis.from_url(self.url, socket_connect_timeout=1)


@pytest.fixture
def own_redis():
    """A started RedisServer of this test's own (never the machine's Redis), killed after the
    test."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer().start()
    yield server
    server.kill()
