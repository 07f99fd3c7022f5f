"""In-process cost of the API's hot calls, gateway against the bare app, in CPU milliseconds.

Run: `.venv/bin/python bench/profile_api.py [--requests 2000] [--profile post|get] [--calls]`.
The load benchmark (bench/api_load.py) measures throughput from a second process; this one runs
both apps in this process through Flask's test client, on SQLite files in a temporary folder, and
reports the CPU time per request (time.process_time: steady on a busy machine, unlike wall time).
`--profile` prints a pyinstrument profile of the gateway's call, to find what to cut next.
`--calls` counts the Python function calls per request of each app (cProfile): unlike CPU time, a
figure that another process's load cannot move, to tell whether a change cut work.
"""

import argparse
import cProfile
import os
import pstats
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api_load import full_body  # noqa: E402


def cpu_ms(gateway_call, bare_call, count, rounds=15):
    """CPU milliseconds per call of each app, and their ratio: medians over interleaved slices.

    The apps take turns slice by slice, so a machine busy with other work slows both alike.
    """
    per_slice = max(count // rounds, 1)
    gateway, bare, ratios = [], [], []
    for _ in range(rounds):
        for call, figures in ((gateway_call, gateway), (bare_call, bare)):
            start = time.process_time()
            for _ in range(per_slice):
                call()
            figures.append((time.process_time() - start) * 1000 / per_slice)
        ratios.append(bare[-1] / gateway[-1])
    return statistics.median(gateway), statistics.median(bare), statistics.median(ratios)


def calls_per_request(call, count):
    """Python function calls (cProfile's total, primitive and recursive) per call of `call`."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(count):
        call()
    profiler.disable()
    return pstats.Stats(profiler).total_calls / count


def gateway_client(workdir):
    """A production-configured gateway on a fresh SQLite file, its client and an Authorization."""
    env = {
        **os.environ,
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_hex(32),
        "DATABASE_URL": f"sqlite:///{workdir / 'gateway.sqlite3'}",
        "FLASK_APP": "app.py",
        "API_RATE_LIMIT": "1000000/second",
        "SESSION_COOKIE_SECURE": "false",
    }
    env.pop("REDIS_URL", None)
    from bench.api_load import prepare_gateway

    auth = prepare_gateway(env)
    os.environ.update({k: v for k, v in env.items() if k != "FLASK_APP"})
    os.environ.pop("REDIS_URL", None)
    from gateway import create_app

    return create_app().test_client(), auth


def bare_client(workdir):
    """The bare app (bench/bare_app.py) on its own SQLite file."""
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bare.sqlite3'}"
    from bench.bare_app import app

    return app.test_client()


def calls(client, auth):
    """(post, get) callables for one client; the GET reads payments the POSTs created."""
    headers = {"Authorization": auth} if auth else {}
    counter = iter(range(10**9))
    created = []

    def post():
        number = next(counter)
        response = client.post("/api/v1/payments", json=full_body(number % 1000), headers=headers)
        assert response.status_code == 201, response.get_data(as_text=True)
        if len(created) < 200:
            created.append(response.get_json()["data"]["payment_id"])

    def get():
        response = client.get(
            f"/api/v1/payments/{created[next(counter) % len(created)]}", headers=headers
        )
        assert response.status_code == 200, response.get_data(as_text=True)

    return post, get


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--profile", choices=("post", "get"), default=None)
    parser.add_argument("--calls", action="store_true", help="Python calls per request, cProfile")
    args = parser.parse_args()
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}")
    workdir = Path(tempfile.mkdtemp(prefix="gateway-profile-"))
    gateway_post, gateway_get = calls(*gateway_client(workdir))
    bare_post, bare_get = calls(bare_client(workdir), None)
    for call in (gateway_post, bare_post):  # warm up: first requests compile and connect
        for _ in range(200):
            call()
    if args.profile:
        from pyinstrument import Profiler

        call = gateway_post if args.profile == "post" else gateway_get
        with Profiler(interval=0.0005) as profiler:
            for _ in range(args.requests):
                call()
        profiler.print(show_all=False)
        return
    if args.calls:
        print(f"{'call':<22}{'gateway calls':>15}{'bare calls':>12}{'bare/gateway':>14}")
        for label, gateway_call, bare_call in (
            ("POST /payments", gateway_post, bare_post),
            ("GET /payments/{id}", gateway_get, bare_get),
        ):
            gateway = calls_per_request(gateway_call, args.requests)
            bare = calls_per_request(bare_call, args.requests)
            print(f"{label:<22}{gateway:>15,.0f}{bare:>12,.0f}{bare / gateway:>13.2f}x")
        return
    print(f"{'call':<22}{'gateway ms':>12}{'bare ms':>10}{'bare/gateway':>14}")
    for label, gateway_call, bare_call in (
        ("POST /payments", gateway_post, bare_post),
        ("GET /payments/{id}", gateway_get, bare_get),
    ):
        gateway, bare, ratio = cpu_ms(gateway_call, bare_call, args.requests)
        print(f"{label:<22}{gateway:>12.2f}{bare:>10.2f}{ratio:>13.2f}x")
    subprocess.run(["uptime"], check=False)


if __name__ == "__main__":
    main()
