"""A real gunicorn on a free loopback port, started and stopped by a test."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.local_servers import free_port

ROOT = Path(__file__).resolve().parent.parent
GUNICORN = Path(sys.executable).with_name("gunicorn")


class Gunicorn:
    """`gunicorn -w N module:app` on 127.0.0.1; waits until it answers /healthz."""

    def __init__(self, target, env, workers=1, log_path=None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path or os.devnull, "wb")
        self.process = subprocess.Popen(
            [
                str(GUNICORN),
                "-w",
                str(workers),
                "-b",
                f"127.0.0.1:{self.port}",
                "--timeout",
                "120",
                "--graceful-timeout",
                "2",
                target,
            ],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, attempts=600):
        """Poll /healthz until the server answers (gunicorn imports the app first)."""
        for _ in range(attempts):
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}")
            try:
                if requests.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except (
                requests.RequestException
            ):  # not listening yet, or the worker still importing the app
                pass
            time.sleep(0.1)
        raise RuntimeError("gunicorn did not answer /healthz")

    def stop(self):
        """Stop the master (and its workers) that this test started."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.log.close()
