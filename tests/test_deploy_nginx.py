"""The kit's nginx site, run by the real nginx in front of a real gunicorn serving the production
app.

The site is deploy/nginx/gateway.conf with only its ports, certificate paths and upstream port
changed to this machine's free loopback ports and a self-signed certificate made here.
"""

import http.client
import json
import os
import ssl
import subprocess
import sys

import pytest

from tests.local_servers import free_port
from tests.nginx_support import (
    CLIENT,
    DOMAIN,
    https,
    nginx_in_front,
    stop_process,
    wait_for_port,
    web_command,
)
from tests.test_deploy import DEPLOY, ROOT, read_env_file

FORGED = "203.0.113.66"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """gunicorn (the web unit's command and the env file `make env-file` writes) behind nginx;
    yields their ports.
    """
    directory = tmp_path_factory.mktemp("deploy")
    env_path = directory / "gateway.env"
    made = subprocess.run(
        [sys.executable, str(DEPLOY / "make_env_file.py"), str(env_path)],
        capture_output=True,
        text=True,
        env={
            "PATH": os.environ["PATH"],
            "BASE_URL": f"https://{DOMAIN}",
            "DATABASE_URL": f"sqlite:///{directory}/gateway.sqlite3",
        },
    )
    assert made.returncode == 0, made.stderr
    upgraded = subprocess.run(
        [str(DEPLOY / "gateway-flask"), "db", "upgrade"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "GATEWAY_ENV": str(env_path)},
    )
    assert upgraded.returncode == 0, upgraded.stderr

    upstream = free_port()
    env = {
        "PATH": os.environ["PATH"],
        **read_env_file(env_path),
        "GUNICORN_BIND": f"127.0.0.1:{upstream}",
        "GUNICORN_WORKERS": "1",
    }
    with open(directory / "gunicorn.log", "w") as log:
        gunicorn = subprocess.Popen(
            web_command("tests.deploy_whoami:app"),
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            with nginx_in_front(directory, upstream) as site:
                wait_for_port(upstream, gunicorn, "gunicorn")
                yield {**site, "upstream": upstream, "env": env_path}
        finally:
            stop_process(gunicorn)


def test_a_request_through_nginx_reaches_the_app_with_the_clients_address_and_https(deployment):
    status, _, body = https(deployment, "GET", "/_test/whoami", headers={"X-Forwarded-For": FORGED})
    assert status == 200
    # TRUSTED_PROXIES=1: the last X-Forwarded-For entry, the one nginx added, not the address the
    # client forged.
    assert json.loads(body) == {"remote_addr": CLIENT, "scheme": "https", "host": "127.0.0.1"}


def test_the_health_check_answers_through_nginx(deployment):
    status, _, body = https(deployment, "GET", "/healthz")
    assert status == 200 and json.loads(body) == {
        "status": "ok",
        "database": "ok",
        "redis": "not_configured",
    }


def test_an_oversized_body_is_refused_by_nginx_with_the_apis_413(deployment):
    status, headers, body = https(
        deployment,
        "POST",
        "/api/v1/payments",
        body=b"x" * (1024 * 1024 + 1),
        headers={"Content-Type": "application/json", "Authorization": "Bearer gw_live_x"},
    )
    assert status == 413
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {
        "success": False,
        "error": True,
        "message": "The request body is too large.",
        "code": "PAYLOAD_TOO_LARGE",
    }


def test_a_body_under_the_limit_reaches_the_app(deployment):
    status, headers, body = https(
        deployment,
        "POST",
        "/api/v1/payments",
        body=json.dumps({"pad": "x" * 500_000}),
        headers={"Content-Type": "application/json", "Authorization": "Bearer gw_live_unknown"},
    )
    assert status == 401 and json.loads(body)["code"] == "INVALID_TOKEN"  # the app's own answer
    assert headers.get("X-Request-ID")


def test_plain_http_is_sent_to_https(deployment):
    connection = http.client.HTTPConnection("127.0.0.1", deployment["http"], timeout=30)
    try:
        connection.request("GET", "/panel/sign-in?next=%2Fpanel")
        response = connection.getresponse()
        assert response.status == 301
        assert response.getheader("Location") == "https://127.0.0.1/panel/sign-in?next=%2Fpanel"
    finally:
        connection.close()


def gateway_flask(deployment, *args):
    """A `flask` command of the deployment (deploy/gateway-flask with its env file); its output."""
    done = subprocess.run(
        [str(DEPLOY / "gateway-flask"), *args],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "GATEWAY_ENV": str(deployment["env"])},
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def chunked_https(deployment, path, headers, body, chunk=16):
    """POST `body` through nginx with Transfer-Encoding: chunked, as SMS to URL Forwarder streams
    it; returns (status, body)."""
    context = ssl.create_default_context(cafile=str(deployment["cert"]))
    connection = http.client.HTTPSConnection(
        "127.0.0.1", deployment["https"], context=context, timeout=30, source_address=(CLIENT, 0)
    )
    try:
        pieces = (body[start : start + chunk] for start in range(0, len(body), chunk))
        connection.request("POST", path, body=pieces, headers=headers, encode_chunked=True)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_forwarders_chunked_post_reaches_the_intake_through_nginx(deployment):
    from tests.forwarder_apps import sms_to_url_body

    gateway_flask(
        deployment, "gateway", "bootstrap", "--brand-name", "Shop", "--email", "o@shop.example"
    )
    url_line, header_line = (
        gateway_flask(deployment, "gateway", "add-forwarder", "--app", "sms-to-url", "--label", "T")
        .strip()
        .splitlines()
    )
    url = url_line.removeprefix("url: ")
    assert url.startswith(f"https://{DOMAIN}/api/forwarders/")
    name, _, value = header_line.removeprefix("header: ").partition(": ")
    headers = {"Content-Type": "application/json; charset=utf-8", name: value}
    path = url.removeprefix(f"https://{DOMAIN}")

    status, body = chunked_https(deployment, path, headers, sms_to_url_body("Your OTP is 1234"))
    assert status == 200, body
    assert json.loads(body)["data"]["status"] == "accepted"

    too_large = sms_to_url_body("z" * (1024 * 1024))
    status, body = chunked_https(deployment, path, headers, too_large, chunk=64 * 1024)
    assert status == 413 and json.loads(body)["code"] == "PAYLOAD_TOO_LARGE"

    wrong = {**headers, name: value[:-1]}
    status, body = chunked_https(deployment, path, wrong, sms_to_url_body("Your OTP is 5678"))
    assert status == 401 and json.loads(body)["code"] == "INVALID_SECRET"
