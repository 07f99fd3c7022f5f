"""The kit's nginx site (deploy/nginx/gateway.conf) run by the real nginx on loopback ports, with a
self-signed certificate made here, and requests to it over verified TLS.

Only the site's ports, certificate paths and upstream port change; every other line is as shipped.
"""

import contextlib
import datetime
import http.client
import ipaddress
import os
import shlex
import shutil
import socket
import ssl
import subprocess
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.local_servers import free_port
from tests.services import unavailable
from tests.test_deploy import DEPLOY, INSTALL_DIR, ROOT, unit

DOMAIN = "pay.example.com"
CLIENT = "127.0.0.2"  # a second loopback address, so the client is not the proxy's 127.0.0.1


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


def web_command(target="app:app"):
    """The web unit's gunicorn command (deploy/gunicorn.conf.py) for this checkout, serving
    `target`.
    """
    command = shlex.split(unit(DEPLOY / "systemd" / "gateway-web.service")["Service"]["ExecStart"])
    command = [part.replace(INSTALL_DIR, str(ROOT)) for part in command]
    command[command.index("app:app")] = target
    return command


def stop_process(process, grace=20):
    """SIGTERM a process this test started, then SIGKILL if it outstays `grace` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def nginx_in_front(directory, upstream_port):
    """The kit's site on free loopback ports in front of `upstream_port`; yields {"https", "http",
    "cert"}.
    """
    nginx = nginx_binary()
    https_port, http_port = free_port(), free_port()
    config = nginx_config(directory, site_config(directory, https_port, http_port, upstream_port))
    options = ["-p", str(directory), "-e", str(directory / "error.log"), "-c", str(config)]
    checked = subprocess.run([nginx, "-t", *options], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen(
        [nginx, *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(https_port, process, "nginx")
        yield {"https": https_port, "http": http_port, "cert": directory / "fullchain.pem"}
    finally:
        stop_process(process)


def https(site, method, path, body=None, headers=None, source=CLIENT):
    """One request through nginx over verified TLS from the given loopback address; returns (status,
    headers, body).
    """
    context = ssl.create_default_context(cafile=str(site["cert"]))
    connection = http.client.HTTPSConnection(
        "127.0.0.1", site["https"], context=context, timeout=30, source_address=(source, 0)
    )
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()
