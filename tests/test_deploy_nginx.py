"""The kit's nginx site, run by the real nginx in front of a real gunicorn serving the production
app.

The site is deploy/nginx/gateway.conf with only its ports, certificate paths and upstream port
changed to this machine's free loopback ports and a self-signed certificate made here.
"""

import datetime
import http.client
import ipaddress
import json
import os
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.local_servers import free_port
from tests.services import unavailable
from tests.test_deploy import DEPLOY, INSTALL_DIR, ROOT, read_env_file, unit

DOMAIN = "pay.example.com"
CLIENT = "127.0.0.2"  # a second loopback address, so the client is not the proxy's 127.0.0.1
FORGED = "203.0.113.66"


def wait_for_port(port, process, what, deadline=60):
    """Return once something accepts connections on the port; fail if the process exits or time runs
    out.
    """
    stop = time.monotonic() + deadline
    while time.monotonic() < stop:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"{what} did not listen on {port} within {deadline} s")


def self_signed(directory):
    """A certificate and key for DOMAIN and 127.0.0.1, as files; returns (certificate path, key
    path).
    """
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, DOMAIN)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(DOMAIN), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "fullchain.pem", directory / "privkey.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def site_config(directory, https_port, http_port, upstream_port):
    """The kit's site with this machine's ports and certificate; every other line as shipped."""
    cert_path, key_path = self_signed(directory)
    text = (DEPLOY / "nginx" / "gateway.conf").read_text()
    replacements = {
        "listen 443 ssl http2;": f"listen 127.0.0.1:{https_port} ssl http2;",
        "listen 80;": f"listen 127.0.0.1:{http_port};",
        f"/etc/letsencrypt/live/{DOMAIN}/fullchain.pem": str(cert_path),
        f"/etc/letsencrypt/live/{DOMAIN}/privkey.pem": str(key_path),
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{upstream_port};",
    }
    for shipped, local in replacements.items():
        assert shipped in text, shipped
        text = text.replace(shipped, local)
    # Only loopback here: the IPv6 wildcard listeners are left out.
    return "\n".join(line for line in text.splitlines() if "listen [::]" not in line)


def nginx_config(directory, site):
    """A main nginx.conf that keeps every file in the test's folder and includes the site."""
    (directory / "site.conf").write_text(site)
    temp = {name: directory / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    user = (
        "user root;\n" if os.geteuid() == 0 else ""
    )  # workers need the test's folder, which only its owner reads
    (directory / "nginx.conf").write_text(
        f"{user}worker_processes 1;\ndaemon off;\npid {directory}/nginx.pid;\nerror_log "
        f"{directory}/error.log;\nevents {{ worker_connections 64; }}\n"
        "http {\n"
        f"  access_log {directory}/access.log;\n"
        + "".join(f"  {name}_temp_path {path};\n" for name, path in temp.items())
        + f"  include {directory}/site.conf;\n}}\n"
    )
    return directory / "nginx.conf"


def nginx_binary():
    """Debian's nginx (`make nginx` installs it), or a skip with the reason."""
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None
    )
    if found is None:
        unavailable("nginx", FileNotFoundError("nginx: run `make nginx`"))
    return found


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """gunicorn (the web unit's command and the env file `make env-file` writes) behind nginx;
    yields their ports.
    """
    nginx = nginx_binary()
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

    upstream, https_port, http_port = free_port(), free_port(), free_port()
    command = shlex.split(unit(DEPLOY / "systemd" / "gateway-web.service")["Service"]["ExecStart"])
    command = [part.replace(INSTALL_DIR, str(ROOT)) for part in command]
    command[command.index("app:app")] = "tests.deploy_whoami:app"
    env = {
        "PATH": os.environ["PATH"],
        **read_env_file(env_path),
        "GUNICORN_BIND": f"127.0.0.1:{upstream}",
        "GUNICORN_WORKERS": "1",
    }
    processes = []
    log = open(directory / "gunicorn.log", "w")
    try:
        processes.append(
            subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
        )
        config = nginx_config(directory, site_config(directory, https_port, http_port, upstream))
        options = ["-p", str(directory), "-e", str(directory / "error.log"), "-c", str(config)]
        checked = subprocess.run([nginx, "-t", *options], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        processes.append(
            subprocess.Popen(
                [nginx, *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        )
        wait_for_port(upstream, processes[0], "gunicorn")
        wait_for_port(https_port, processes[1], "nginx")
        yield {
            "https": https_port,
            "http": http_port,
            "upstream": upstream,
            "cert": directory / "fullchain.pem",
            "env": env_path,
        }
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def https(deployment, method, path, body=None, headers=None, source=CLIENT):
    """One request through nginx over verified TLS from the given loopback address; returns (status,
    headers, body).
    """
    context = ssl.create_default_context(cafile=str(deployment["cert"]))
    connection = http.client.HTTPSConnection(
        "127.0.0.1", deployment["https"], context=context, timeout=30, source_address=(source, 0)
    )
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


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
