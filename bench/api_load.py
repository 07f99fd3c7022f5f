"""Load benchmark: the gateway under gunicorn against a bare Flask app doing the same work.

Run: `make bench` (or `.venv/bin/python bench/api_load.py [--workers 4] [--runs 3] [--seconds 10]
[--connections 16] [--warmup 3] [--postgres-url postgresql+psycopg://postgres@127.0.0.1:5432/gw_bench]`).
Every POST carries the specification's full body (section 2.2: amount, currency, reference, the
three URLs, the customer's name, e-mail and phone; a thousand customers in turn), and every GET
reads a payment with its customer block. The bare app (bench/bare_app.py) upserts the customer by
e-mail, inserts the payment with its URLs and reads both. wrk, from Debian's package, drives both
servers from a second process, each measured run after --warmup seconds of the same load (its
figures discarded: every worker booted and warm); the figures are the median of --runs rounds,
gateway and bare app taking turns in each round. With --postgres-url it also reports the gateway's
POST throughput on PostgreSQL with 2 and with 4 web processes.
"""

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.databases, when run as a script
BIN = Path(sys.executable).parent
CUSTOMERS = 1000
# The full body of section 2.2; wrk's Lua fills in the customer's number, one of CUSTOMERS.
FULL_BODY = {
    "amount": "500.00",
    "currency": "BDT",
    "reference": "ORDER-%d",
    # An address, not a name: the gateway checks at creation where the callback points, and a name
    # would time this machine's DNS resolver (5 s and more under load here), not the gateway.
    "callback_url": "https://93.184.215.14/hooks/payments",
    "redirect_url": "https://shop.example/orders/%d/paid",
    "cancel_url": "https://shop.example/orders/%d/cancelled",
    "customer_name": "Customer %d",
    "customer_mail": "customer%d@shop.example",
    "customer_phone": "+8801712%06d",
}
POST_LUA = """
template = '%s'
counter = 0
headers = {["Content-Type"] = "application/json", ["Authorization"] = "%s"}
request = function()
  counter = counter + 1
  local n = counter %% %d
  local body = string.format(template, counter, n, n, n, n, n)
  return wrk.format("POST", "/api/v1/payments", headers, body)
end
"""
GET_LUA = """
ids = {%s}
counter = 0
request = function()
  counter = counter + 1
  local path = "/api/v1/payments/" .. ids[(counter %% #ids) + 1]
  return wrk.format("GET", path, {["Authorization"] = "%s"})
end
"""
# (call, what it is measured against, least gateway/bare ratio); p99 is held to P99_TARGET_MS.
TARGETS = (("post", "POST /payments (full body)", 0.80), ("get", "GET /payments/{id}", 0.90))
P99_TARGET_MS = 50.0


def full_body(number):
    """The full body for customer `number`, as the Lua script sends it."""
    text = json.dumps(FULL_BODY).replace("%06d", f"{number:06d}").replace("%d", str(number))
    return json.loads(text)


def free_port():
    """An unused TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(module, env, port, workers, log_path):
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
        # The request log stays at the production level (INFO): written to a file, as a service's
        # would be.
        stderr=open(log_path, "w"),  # noqa: SIM115 - the child keeps it
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


def warm_then_wrk(url, script, args):
    """wrk's figures for a serving app: a --warmup run first, its figures discarded.

    gunicorn answers as soon as one worker has booted; the others were still importing the app
    (about 1.5 s of CPU each, on the same two cores) during the first seconds of the run, and each
    worker's first requests pay for its first connection and statements. A server runs for days:
    neither is what a merchant's requests meet.
    """
    if args.warmup:
        wrk(url, script, args.warmup, args.connections)
    return wrk(url, script, args.seconds, args.connections)


def latency(output, percentile):
    """A latency percentile from wrk's --latency table, in milliseconds."""
    value, unit = re.search(rf"{re.escape(percentile)}\s+([\d.]+)(us|ms|s)", output).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def prepare_gateway(env):
    """Migrate a fresh SQLite database and create a brand and key; returns the Authorization
    header."""
    subprocess.run(
        [str(BIN / "flask"), "db", "upgrade"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    # Production bootstrap takes the shop's name and the administrator's address (no defaults
    # there).
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
    """Create payments (full body) to read back; returns their ids."""
    ids = []
    for number in range(count):
        response = requests.post(
            f"{base}/api/v1/payments",
            json=full_body(number),
            headers={"Authorization": auth},
            timeout=10,
        )
        response.raise_for_status()
        ids.append(response.json()["data"]["payment_id"])
    return ids


def measure(module, env, args, workers, auth="", calls=("post", "get")):
    """Serve one app with `workers` processes and load it with each call; returns {call:
    figures}."""
    port = free_port()
    log_path = Path(args.workdir) / f"{module.split(':')[0]}-{port}.log"
    process = start_gunicorn(module, env, port, workers, log_path)
    base = f"http://127.0.0.1:{port}"
    figures = {}
    try:
        if "post" in calls:
            lua = POST_LUA % (json.dumps(FULL_BODY), auth, CUSTOMERS)
            figures["post"] = warm_then_wrk(f"{base}/api/v1/payments", lua, args)
        if "get" in calls:
            ids = ",".join(json.dumps(i) for i in seed_ids(base, auth))
            figures["get"] = warm_then_wrk(base, GET_LUA % (ids, auth), args)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return figures


def gateway_env(base_env, database_url):
    """The gateway's production environment on the given database, rate limits out of reach."""
    env = {
        **base_env,
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_hex(32),
        "DATABASE_URL": database_url,
        "FLASK_APP": "app.py",
        "API_RATE_LIMIT": "1000000/second",
        "SESSION_COOKIE_SECURE": "false",
    }
    env.pop("REDIS_URL", None)
    return env


def median_figures(rounds, call):
    """The median of each figure of one call over the rounds."""
    return tuple(statistics.median(r[call][i] for r in rounds) for i in range(4))


def print_rounds(name, rounds):
    """Each round's figures and their median for one server."""
    for call, label, _ in TARGETS:
        for index, figures in enumerate(rounds, 1):
            rps, p50, p99, bad = figures[call]
            print(f"{name:<24}{label:<30}{index:>6}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{bad:>9}")
        rps, p50, p99, bad = median_figures(rounds, call)
        print(f"{name:<24}{label:<30}{'median':>6}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{bad:>9.0f}")


def report_sqlite(args, base_env, workdir):
    """Gateway and bare app on SQLite, --runs rounds; prints the figures and returns missed
    targets."""
    env = gateway_env(base_env, f"sqlite:///{workdir / 'gateway.sqlite3'}")
    bare_env = {**base_env, "DATABASE_URL": f"sqlite:///{workdir / 'bare.sqlite3'}"}
    auth = prepare_gateway(env)
    gateway_rounds, bare_rounds = [], []
    for _ in range(args.runs):
        gateway_rounds.append(measure("app:app", env, args, args.workers, auth))
        bare_rounds.append(measure("bench.bare_app:app", bare_env, args, args.workers))
    print(
        f"\n{args.workers} gunicorn sync workers, SQLite (WAL), the full body of section 2.2, "
        f"wrk -t2 -c{args.connections} -d{args.seconds}s after {args.warmup}s of warm-up, "
        f"{args.runs} rounds\n"
    )
    print(
        f"{'server':<24}{'call':<30}{'round':>6}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'non-2xx':>9}"
    )
    print_rounds("gateway", gateway_rounds)
    print_rounds("bare Flask+SQLAlchemy", bare_rounds)
    print()
    missed = []
    for call, label, target in TARGETS:
        gateway, bare = median_figures(gateway_rounds, call), median_figures(bare_rounds, call)
        ratio = gateway[0] / bare[0]
        met = ratio >= target
        print(f"target {label}: gateway/bare {ratio:.2f}x (>= {target:.2f}x) {verdict(met)}")
        met_p99 = gateway[2] < P99_TARGET_MS
        print(
            f"target {label}: gateway p99 {gateway[2]:.1f} ms (< {P99_TARGET_MS:.0f} ms) "
            f"{verdict(met_p99)}"
        )
        missed += [f"{label} at {ratio:.2f}x"] * (not met)
        missed += [f"{label} p99 {gateway[2]:.1f} ms"] * (not met_p99)
        non_2xx = sum(r[call][3] for r in gateway_rounds + bare_rounds)
        missed += [f"{non_2xx} non-2xx answers to {label}"] * bool(non_2xx)
    return missed


def report_postgres(args, base_env, url):
    """The gateway's POST throughput on PostgreSQL with 2 and with 4 web processes (no target)."""
    from sqlalchemy import create_engine, text

    from bench.databases import ensure_database

    ensure_database(url)
    engine = create_engine(url)
    print(f"\nPostgreSQL ({url.rsplit('@', 1)[-1]}), POST /payments (full body), gateway only")
    for workers in (2, 4):
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
        env = gateway_env(base_env, url)
        auth = prepare_gateway(env)
        rps, p50, p99, bad = measure("app:app", env, args, workers, auth, calls=("post",))["post"]
        print(
            f"{workers} web processes: {rps:.0f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} "
            f"ms, non-2xx {bad}"
        )
    engine.dispose()


def verdict(met):
    return "met" if met else "MISSED"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--warmup", type=int, default=3, help="seconds of load before each measured run (0: none)"
    )
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (2: the old mode)")
    parser.add_argument("--runs", type=int, default=3, help="rounds; the median is reported")
    parser.add_argument("--postgres-url", default=None, help="also PostgreSQL with 2 and 4 workers")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install wrk")
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}")
    workdir = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    args.workdir = workdir
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        missed = report_sqlite(args, base_env, workdir)
        if args.postgres_url:
            report_postgres(args, base_env, args.postgres_url)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if missed:
        raise SystemExit("benchmark missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
