"""A serving process's heap is settled once its app is built (gateway.serving): the objects the
built app holds are frozen, so a full garbage collection walks only what came after.

Each check runs `app.py` in a process of its own: freezing this test process's heap would keep
every app the suite builds alive until it ends.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.engine_independent

# Imports app.py as gunicorn does, then reports the collector's state and serves one request.
PROBE = """
import gc, json
import app
from gateway.extensions import db
frozen, tracked = gc.get_freeze_count(), len(gc.get_objects())
mappers_ready = all(mapper.configured for mapper in db.Model.registry.mappers)
answer = app.app.test_client().get("/healthz")
print(json.dumps({"frozen": frozen, "tracked": tracked, "mappers_ready": mappers_ready,
                  "health": answer.status_code}))
"""


@pytest.fixture
def serving_state(tmp_path):
    """What `import app` leaves in a fresh process, on a SQLite file of its own."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("TEST_", "APP_"))}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'serving.sqlite3'}",
        PYTHONPATH=str(ROOT),
        JOBS_IN_PROCESS="false",
    )
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_built_app_is_frozen_out_of_garbage_collection(serving_state):
    # The app's long-lived objects (some 200,000) froze; a full collection walks only the few that
    # were made after it.
    assert serving_state["frozen"] > 100_000
    assert serving_state["tracked"] < serving_state["frozen"] / 10


def test_the_mappers_are_configured_before_the_freeze(serving_state):
    # Left to the first query, their configuration's objects would be walked by every collection.
    assert serving_state["mappers_ready"]


def test_a_settled_app_still_serves(serving_state):
    assert serving_state["health"] == 200
