"""The web unit's gunicorn serving the production app: its workers are forks of the app the master
built, and a worker killed is replaced and the API answers again."""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from tests.local_servers import free_port
from tests.nginx_support import stop_process, web_command
from tests.test_deploy import DEPLOY, ROOT, read_env_file


def workers_of(master):
    """The process ids of gunicorn's workers (the master's children)."""
    return set(map(int, Path(f"/proc/{master.pid}/task/{master.pid}/children").read_text().split()))


def eventually(check, seconds=180, pause=0.1):
    """Whether `check()` turns true within `seconds` (generous: a busy machine boots slowly)."""
    waiting = threading.Event()
    for _ in range(int(seconds / pause)):
        if check():
            return True
        waiting.wait(pause)
    return False


def healthy(url):
    """Whether /healthz answers 200 with a working database."""
    try:
        answer = requests.get(url + "/healthz", timeout=5)
    except requests.RequestException:
        return False
    return answer.status_code == 200 and answer.json()["database"] == "ok"


@pytest.fixture
def web_service(tmp_path):
    """The web unit's command on the production app, two workers, a SQLite file; yields (master,
    url).
    """
    env_path = tmp_path / "gateway.env"
    subprocess.run(
        [sys.executable, str(DEPLOY / "make_env_file.py"), str(env_path)],
        check=True,
        capture_output=True,
        env={
            "PATH": os.environ["PATH"],
            "BASE_URL": "https://shop.example",
            "DATABASE_URL": f"sqlite:///{tmp_path}/gateway.sqlite3",
        },
    )
    subprocess.run(
        [str(DEPLOY / "gateway-flask"), "db", "upgrade"],
        check=True,
        capture_output=True,
        env={"PATH": os.environ["PATH"], "GATEWAY_ENV": str(env_path)},
    )
    port = free_port()
    env = {
        "PATH": os.environ["PATH"],
        **read_env_file(env_path),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
    }
    with open(tmp_path / "gunicorn.log", "w") as log:
        master = subprocess.Popen(web_command(), cwd=ROOT, env=env, stdout=log, stderr=log)
    try:
        yield master, f"http://127.0.0.1:{port}"
    finally:
        stop_process(master)


def test_the_web_service_builds_the_app_once_and_forks_its_workers():
    settings = {}
    exec((DEPLOY / "gunicorn.conf.py").read_text(), settings)
    assert settings["preload_app"] is True
    assert callable(settings["post_fork"])  # each worker's database connections are its own


def test_a_killed_web_worker_is_replaced_and_the_api_answers_again(web_service):
    master, url = web_service
    assert eventually(lambda: healthy(url) and len(workers_of(master)) == 2)
    first = workers_of(master)
    for pid in first:
        os.kill(pid, signal.SIGKILL)  # both at once, as the OOM killer or a crash loop would
    assert eventually(lambda: len(workers_of(master) - first) == 2), "no worker was replaced"
    assert eventually(lambda: healthy(url))
    assert master.poll() is None
