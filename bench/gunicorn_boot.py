"""How long the web service is unanswered: gunicorn started, and every one of its workers SIGKILLed.

Run: `.venv/bin/python bench/gunicorn_boot.py [--checkout PATH] [--workers 5] [--rounds 3]`.
Each round starts the web unit's command (`gunicorn -c deploy/gunicorn.conf.py app:app`, of
--checkout, this one by default: point it at another worktree for a before/after) on a fresh
SQLite file with production settings, and reports
- boot: seconds from the start to the first 200 from /healthz;
- settled: seconds from the start until every worker has stopped using CPU (all booted);
- respawn: seconds from SIGKILLing every worker at once to the next 200 from /healthz.
The figures are medians of the rounds. On a busy machine they grow alike for both checkouts.
"""

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.*, when run as a script
from bench.api_load import free_port  # noqa: E402
from bench.processes import exit_on_signals, start, stop  # noqa: E402

BIN = Path(sys.executable).parent
POLL = 0.02  # seconds between /healthz polls


def answered(url):
    """Whether /healthz answers 200 now."""
    try:
        return requests.get(url, timeout=1).status_code == 200
    except requests.RequestException:
        return False


def wait_answered(url, since, limit=300):
    """Seconds from `since` (a monotonic reading) to /healthz's first 200."""
    while time.monotonic() - since < limit:
        if answered(url):
            return time.monotonic() - since
        time.sleep(POLL)
    raise SystemExit(f"{url} did not answer within {limit} s")


def workers_of(master):
    """The process ids of gunicorn's workers (the master's children)."""
    path = Path(f"/proc/{master.pid}/task/{master.pid}/children")
    return [int(pid) for pid in path.read_text().split()]


def cpu_ticks(pid):
    """User plus system clock ticks a process has used; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def wait_settled(master, count, since, quiet=0.5, limit=300):
    """Seconds from `since` until `count` workers exist and none has used CPU for `quiet` s."""
    last, still_since = None, time.monotonic()
    while time.monotonic() - since < limit:
        pids = workers_of(master)
        ticks = [cpu_ticks(pid) for pid in pids]
        if len(pids) != count or (pids, ticks) != last:
            last, still_since = (pids, ticks), time.monotonic()
        elif time.monotonic() - still_since >= quiet:
            return still_since - since
        time.sleep(0.05)
    raise SystemExit("the workers never settled")


def one_round(checkout, workers, workdir):
    """Start gunicorn, time its boot, kill every worker, time the respawn; returns the figures."""
    port = free_port()
    env = {
        **os.environ,
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_hex(32),
        "DATABASE_URL": f"sqlite:///{workdir / f'boot-{port}.sqlite3'}",
        "BASE_URL": "https://shop.example",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": str(workers),
        "JOBS_IN_PROCESS": "false",
    }
    env.pop("REDIS_URL", None)
    url = f"http://127.0.0.1:{port}/healthz"
    began = time.monotonic()
    master = start(
        [str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "app:app"],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(workdir / f"gunicorn-{port}.log", "w"),  # noqa: SIM115 - the child keeps it
    )
    try:
        boot = wait_answered(url, began)
        settled = wait_settled(master, workers, began)
        killed, dead = time.monotonic(), workers_of(master)
        for pid in dead:
            os.kill(pid, signal.SIGKILL)
        while set(workers_of(master)) & set(dead):  # reaped: any answer now is a new worker's
            time.sleep(0.005)
        respawn = wait_answered(url, killed)
        return {"boot": boot, "settled": settled, "respawn": respawn}
    finally:
        stop(master)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--workers", type=int, default=2 * os.cpu_count() + 1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    exit_on_signals()  # gunicorn is stopped however the benchmark ends
    with tempfile.TemporaryDirectory() as directory:
        rounds = [
            one_round(args.checkout, args.workers, Path(directory)) for _ in range(args.rounds)
        ]
    print(f"checkout {args.checkout}, {args.workers} workers, {os.cpu_count()} cores")
    for name in ("boot", "settled", "respawn"):
        figures = [figure[name] for figure in rounds]
        each = ", ".join(f"{figure:.2f}" for figure in figures)
        print(f"{name:8} median {statistics.median(figures):6.2f} s  ({each})")


if __name__ == "__main__":
    main()
