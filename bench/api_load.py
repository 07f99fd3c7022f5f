"""Load benchmark: the gateway under gunicorn (production settings, SQLite) against a bare Flask app.

Run: `make bench` (or `.venv/bin/python bench/api_load.py [--seconds 10] [--connections 16]`).
wrk, from Debian's package, drives both servers from a second process; this script prints
requests/s, p50 and p99 for POST /payments and GET /payments/{id} and the gateway/bare ratio.
"""

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
POST_LUA = """
wrk.method = "POST"
wrk.body = '{"amount": "500.00", "currency": "BDT", "reference": "bench-order"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "%s"
"""
GET_LUA = """
ids = {%s}
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", "/api/v1/payments/" .. ids[(counter %% #ids) + 1], {["Authorization"] = "%s"})
end
"""


def free_port():
    """An unused TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(module, env, port, workers):
    """gunicorn serving `module` on 127.0.0.1:port; returns the process once it answers."""
    process = subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            "-w",
            str(workers),
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            module,
        ],
        cwd=ROOT,
        env=env,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/", timeout=5)
            return process
        except (
            requests.RequestException
        ):  # not listening yet, or a first answer slow on a busy machine
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{module} did not start on port {port}")


def wrk(url, script, seconds, connections):
    """Run wrk with a Lua script; returns (requests/s, p50 ms, p99 ms, non-2xx count)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    output = subprocess.run(
        [
            "wrk",
            "-t",
            "2",
            "-c",
            str(connections),
            "-d",
            f"{seconds}s",
            "--latency",
            "-s",
            handle.name,
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    os.unlink(handle.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return (
        rps,
        latency(output, "50%"),
        latency(output, "99%"),
        int(non_2xx.group(1)) if non_2xx else 0,
    )


def latency(output, percentile):
    """A latency percentile from wrk's --latency table, in milliseconds."""
    value, unit = re.search(rf"{re.escape(percentile)}\s+([\d.]+)(us|ms|s)", output).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def prepare_gateway(env):
    """Migrate a fresh SQLite database and create a brand and key; returns the Authorization header."""
    subprocess.run(
        [str(BIN / "flask"), "db", "upgrade"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    # Production bootstrap takes the shop's name and the administrator's address (no defaults there).
    out = subprocess.run(
        [
            str(BIN / "flask"),
            "gateway",
            "bootstrap",
            "--brand-name",
            "Bench Shop",
            "--email",
            "bench@shop.example",
            "--password",
            "bench-password-1",
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return "Bearer " + out.strip().splitlines()[-1]


def seed_ids(base, auth, count=200):
    """Create payments to read back; returns their ids."""
    ids = []
    for _ in range(count):
        response = requests.post(
            f"{base}/api/v1/payments",
            json={"amount": "500.00", "currency": "BDT"},
            headers={"Authorization": auth},
            timeout=10,
        )
        response.raise_for_status()
        ids.append(response.json()["data"]["payment_id"])
    return ids


def measure(name, module, env, args, auth=""):
    """Serve one app and load it with both calls; returns its figures."""
    port = free_port()
    process = start_gunicorn(module, env, port, args.workers)
    base = f"http://127.0.0.1:{port}"
    try:
        ids = seed_ids(base, auth)
        ids_lua = ",".join(json.dumps(i) for i in ids)
        post = wrk(f"{base}/api/v1/payments", POST_LUA % auth, args.seconds, args.connections)
        get = wrk(base, GET_LUA % (ids_lua, auth), args.seconds, args.connections)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return {"name": name, "post": post, "get": get}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install wrk")
    workdir = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    gateway_env = {
        **base_env,
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_hex(32),
        "DATABASE_URL": f"sqlite:///{workdir / 'gateway.sqlite3'}",
        "FLASK_APP": "app.py",
        "API_RATE_LIMIT": "1000000/second",
        "SESSION_COOKIE_SECURE": "false",
    }
    gateway_env.pop("REDIS_URL", None)
    bare_env = {**base_env, "DATABASE_URL": f"sqlite:///{workdir / 'bare.sqlite3'}"}
    auth = prepare_gateway(gateway_env)
    results = [
        measure("gateway", "app:app", gateway_env, args, auth),
        measure("bare Flask+SQLAlchemy", "bench.bare_app:app", bare_env, args),
    ]
    print(
        f"\n{args.workers} gunicorn sync workers, SQLite (WAL), per-key rate limiter on (memory, limit raised out of reach), wrk -t2 -c{args.connections} -d{args.seconds}s\n"  # noqa: E501
    )
    print(f"{'server':<24}{'call':<26}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>9}")
    for result in results:
        for call, label in (("post", "POST /payments"), ("get", "GET /payments/{id}")):
            rps, p50, p99, bad = result[call]
            print(f"{result['name']:<24}{label:<26}{rps:>10.0f}{p50:>10.2f}{p99:>10.2f}{bad:>9}")
    gateway, bare = results
    missed = []
    for call, label in (("post", "POST /payments"), ("get", "GET /payments/{id}")):
        ratio = gateway[call][0] / bare[call][0]
        print(f"gateway/bare throughput, {label}: {ratio:.0%} (target >= 70%)")
        if ratio < 0.70:
            missed.append(f"{label} at {ratio:.0%} of the bare app")
    missed += [
        f"{r['name']} answered {r[call][3]} non-2xx to {call.upper()}"
        for r in results
        for call in ("post", "get")
        if r[call][3]
    ]
    shutil.rmtree(workdir, ignore_errors=True)
    if missed:
        raise SystemExit("benchmark missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
