"""Load benchmark: the gateway under gunicorn against a bare Flask app doing the same work.

Run: `make bench` (or `.venv/bin/python bench/api_load.py [--workers 4] [--runs 3] [--seconds 10]
[--connections 16] [--warmup 3] [--postgres-url postgresql+psycopg://postgres@127.0.0.1:5432/gw_bench]`).
Every POST carries the specification's full body (section 2.2: amount, currency, reference, the
three URLs, the customer's name, e-mail and phone; a thousand customers in turn), and every GET
reads a payment with its customer block. The bare app (bench/bare_app.py) upserts the customer by
e-mail, inserts the payment with its URLs and reads both. wrk, from Debian's package, drives both
servers from a second process, each measured run after --warmup seconds of the same load (its
figures discarded: every worker booted and warm); the figures are the median of --runs rounds,
gateway and bare app taking turns in each round, on SQLite and, with --postgres-url, on PostgreSQL.

Beside req/s and latency, each run reports the CPU milliseconds per request of the serving
processes (gunicorn's master and workers) plus the database server's: on PostgreSQL the backends
connected to the benchmark's database, read from /proc like the workers (the server's shared
processes, WAL writer and checkpointer, are not counted: other databases share them). wrk's own
CPU is not counted.
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
CPU_TARGET = 1.25  # most gateway/bare CPU per request, per engine and call
ENGINE_TARGET = 1.5  # most PostgreSQL/SQLite CPU per request of the gateway, per call


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
    deadline = time.time() + 120  # a shared, loaded machine boots slowly
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


def wrk(url, script, seconds, connections, cpu_meter=None):
    """Run wrk with a Lua script; returns (requests/s, p50 ms, p99 ms, non-2xx count, CPU ms per
    request), the last None without a `cpu_meter` (a callable giving CPU seconds so far).
    """
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    cpu_before = cpu_meter() if cpu_meter else None
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
    cpu_after = cpu_meter() if cpu_meter else None
    os.unlink(handle.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    done = int(re.search(r"(\d+) requests in", output).group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    cpu_ms = (cpu_after - cpu_before) * 1000 / done if cpu_meter and done else None
    return (
        rps,
        latency(output, "50%"),
        latency(output, "99%"),
        int(non_2xx.group(1)) if non_2xx else 0,
        cpu_ms,
    )


def warm_then_wrk(url, script, args, cpu_meter=None):
    """wrk's figures for a serving app: a --warmup run first, its figures discarded.

    gunicorn answers as soon as one worker has booted; the others were still importing the app
    (about 1.5 s of CPU each, on the same two cores) during the first seconds of the run, and each
    worker's first requests pay for its first connection and statements. A server runs for days:
    neither is what a merchant's requests meet.
    """
    if args.warmup:
        wrk(url, script, args.warmup, args.connections)
    return wrk(url, script, args.seconds, args.connections, cpu_meter)


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """CPU seconds (user + system) process `pid` has used; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14 and 15)


def children(pid):
    """The pids whose parent is `pid` (gunicorn's workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                parent = int(handle.read().rpartition(")")[2].split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
        if parent == pid:
            found.append(int(entry))
    return found


class CpuMeter:
    """CPU seconds used so far by a gunicorn master and its workers, and by the PostgreSQL backends
    connected to the database of `postgres_url` (none on SQLite).

    The backends are those of the database at each reading, besides the meter's own connection:
    the workers' pooled connections stay open across a run, so the same backends are read twice.
    """

    def __init__(self, server_pid, postgres_url=None):
        self.server_pid = server_pid
        self.connection = None
        self.database = None
        if postgres_url:
            import psycopg

            base = postgres_url.replace("postgresql+psycopg://", "postgresql://")
            self.database = base.rsplit("/", 1)[1].split("?", 1)[0]
            self.connection = psycopg.connect(base, autocommit=True)

    def backends(self):
        """The pids of the database's backends, this meter's own left out."""
        if self.connection is None:
            return []
        rows = self.connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (self.database,),
        ).fetchall()
        return [pid for (pid,) in rows]

    def __call__(self):
        pids = [self.server_pid, *children(self.server_pid), *self.backends()]
        return sum(process_cpu(pid) for pid in pids)

    def close(self):
        if self.connection is not None:
            self.connection.close()


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


def measure(module, env, args, workers, auth="", postgres_url=None):
    """Serve one app with `workers` processes and load it with each call; returns {call:
    figures}."""
    port = free_port()
    log_path = Path(args.workdir) / f"{module.split(':')[0]}-{port}.log"
    process = start_gunicorn(module, env, port, workers, log_path)
    base = f"http://127.0.0.1:{port}"
    meter = CpuMeter(process.pid, postgres_url)
    figures = {}
    try:
        lua = POST_LUA % (json.dumps(FULL_BODY), auth, CUSTOMERS)
        figures["post"] = warm_then_wrk(f"{base}/api/v1/payments", lua, args, meter)
        ids = ",".join(json.dumps(i) for i in seed_ids(base, auth))
        figures["get"] = warm_then_wrk(base, GET_LUA % (ids, auth), args, meter)
    finally:
        meter.close()
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


FIGURES = 5  # req/s, p50 ms, p99 ms, non-2xx, CPU ms per request


def median_figures(rounds, call):
    """The median of each figure of one call over the rounds."""
    return tuple(statistics.median(r[call][i] for r in rounds) for i in range(FIGURES))


def print_rounds(name, rounds):
    """Each round's figures and their median for one server."""
    for call, label, _ in TARGETS:
        for index, figures in enumerate(rounds, 1):
            print(row(name, label, index, figures[call]))
        print(row(name, label, "median", median_figures(rounds, call)))


def row(name, label, index, figures):
    """One line of the table."""
    rps, p50, p99, bad, cpu = figures
    return (
        f"{name:<24}{label:<30}{index:>6}{rps:>10.0f}{p50:>9.2f}{p99:>9.2f}{bad:>9.0f}{cpu:>9.2f}"
    )


def report_engine(args, engine, gateway_env_, bare_env, postgres_url=None):
    """Gateway and bare app on one engine, --runs rounds; prints the figures and returns (missed
    targets, the gateway's median figures per call).
    """
    auth = prepare_gateway(gateway_env_)
    gateway_rounds, bare_rounds = [], []
    for _ in range(args.runs):
        gateway_rounds.append(
            measure("app:app", gateway_env_, args, args.workers, auth, postgres_url)
        )
        bare_rounds.append(
            measure("bench.bare_app:app", bare_env, args, args.workers, postgres_url=postgres_url)
        )
    print(
        f"\n{args.workers} gunicorn sync workers, {engine}, the full body of section 2.2, "
        f"wrk -t2 -c{args.connections} -d{args.seconds}s after {args.warmup}s of warm-up, "
        f"{args.runs} rounds; load average {load_average()}\n"
    )
    print(
        f"{'server':<24}{'call':<30}{'round':>6}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'non-2xx':>9}{'CPU ms':>9}"
    )
    print_rounds("gateway", gateway_rounds)
    print_rounds("bare Flask+SQLAlchemy", bare_rounds)
    print()
    missed = []
    gateway_medians = {}
    for call, label, target in TARGETS:
        gateway, bare = median_figures(gateway_rounds, call), median_figures(bare_rounds, call)
        gateway_medians[call] = gateway
        where = f"{label} on {engine}"
        ratio = gateway[0] / bare[0]
        met = ratio >= target
        print(f"target {where}: gateway/bare req/s {ratio:.2f}x (>= {target:.2f}x) {verdict(met)}")
        cpu_ratio = gateway[4] / bare[4]
        met_cpu = cpu_ratio <= CPU_TARGET
        print(
            f"target {where}: gateway/bare CPU per request {gateway[4]:.2f}/{bare[4]:.2f} ms = "
            f"{cpu_ratio:.2f}x (<= {CPU_TARGET:.2f}x) {verdict(met_cpu)}"
        )
        met_p99 = gateway[2] < P99_TARGET_MS
        print(
            f"target {where}: gateway p99 {gateway[2]:.1f} ms (< {P99_TARGET_MS:.0f} ms) "
            f"{verdict(met_p99)}"
        )
        missed += [f"{where} at {ratio:.2f}x"] * (not met)
        missed += [f"{where} CPU at {cpu_ratio:.2f}x"] * (not met_cpu)
        missed += [f"{where} p99 {gateway[2]:.1f} ms"] * (not met_p99)
        non_2xx = sum(r[call][3] for r in gateway_rounds + bare_rounds)
        missed += [f"{non_2xx} non-2xx answers to {where}"] * bool(non_2xx)
    return missed, gateway_medians


def report_sqlite(args, base_env, workdir):
    """Gateway and bare app on SQLite (WAL)."""
    env = gateway_env(base_env, f"sqlite:///{workdir / 'gateway.sqlite3'}")
    bare_env = {**base_env, "DATABASE_URL": f"sqlite:///{workdir / 'bare.sqlite3'}"}
    return report_engine(args, "SQLite (WAL)", env, bare_env)


def report_postgres(args, base_env, url):
    """Gateway and bare app on PostgreSQL, in a database emptied first (the bare app's tables
    beside the gateway's).
    """
    from sqlalchemy import create_engine, text

    from bench.databases import ensure_database

    ensure_database(url)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()
    bare_env = {**base_env, "DATABASE_URL": url}
    return report_engine(args, "PostgreSQL", gateway_env(base_env, url), bare_env, url)


def compare_engines(sqlite, postgres):
    """PostgreSQL's CPU per request against SQLite's, for the gateway; returns missed targets."""
    missed = []
    print()
    for call, label, _ in TARGETS:
        ratio = postgres[call][4] / sqlite[call][4]
        met = ratio <= ENGINE_TARGET
        print(
            f"target {label}: gateway CPU per request PostgreSQL/SQLite {postgres[call][4]:.2f}/"
            f"{sqlite[call][4]:.2f} ms = {ratio:.2f}x (<= {ENGINE_TARGET:.2f}x) {verdict(met)}"
        )
        missed += [f"{label} PostgreSQL/SQLite CPU at {ratio:.2f}x"] * (not met)
    return missed


def load_average():
    """The machine's 1, 5 and 15 minute load averages, as uptime prints them."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


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
    parser.add_argument(
        "--postgres-url", default=None, help="also gateway and bare app on PostgreSQL"
    )
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install wrk")
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}")
    workdir = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    args.workdir = workdir
    base_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        missed, sqlite = report_sqlite(args, base_env, workdir)
        if args.postgres_url:
            missed_postgres, postgres = report_postgres(args, base_env, args.postgres_url)
            missed += missed_postgres + compare_engines(sqlite, postgres)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if missed:
        raise SystemExit("benchmark missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
