"""Test-only WSGI app for a gunicorn a test starts: it stalls at one commit so the test can SIGKILL
the worker there.

Nothing here is imported by the gateway. The hook is armed only in the gunicorn process a test
starts, through STALL_FILE; the first request reaching the stall point writes its worker's pid there
and sleeps until killed, and any request after that (the retry, in the respawned worker) runs
normally. STALL_AT picks the moment: `after_commit` (the new payment or refund row just committed)
or `before_commit` (written, not committed).
"""

import os
import re
import time

from sqlalchemy import event
from sqlalchemy.engine import Engine

from gateway import create_app
from gateway.extensions import db

STALL_FILE = os.environ["STALL_FILE"]
STALL_AT = os.environ.get("STALL_AT", "after_commit")
CREATES = re.compile(r"^\s*INSERT INTO (payments|refunds)\b", re.IGNORECASE)

app = create_app(
    {
        "APP_ENV": "testing",
        "SQLALCHEMY_DATABASE_URI": os.environ["STALL_DATABASE_URL"],
        "REDIS_URL": None,
        "RATELIMIT_ENABLED": False,
        "IDEMPOTENCY_LEASE_SECONDS": float(os.environ.get("IDEMPOTENCY_LEASE_SECONDS", 1)),
    }
)
writes = {"creating": False}


@event.listens_for(Engine, "before_cursor_execute")
def note_creation(conn, cursor, statement, *args):
    """Remember that the open transaction inserted a payment or a refund."""
    if CREATES.match(statement):
        writes["creating"] = True


def stall_once():
    """Write this worker's pid for the test and wait to be killed; only the first time."""
    try:
        descriptor = os.open(STALL_FILE, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(descriptor, str(os.getpid()).encode())
    os.close(descriptor)
    while True:
        time.sleep(1)


@event.listens_for(db.session, "before_commit")
def stall_before_commit(session):
    if STALL_AT == "before_commit" and writes["creating"]:
        writes["creating"] = False
        stall_once()


@event.listens_for(db.session, "after_commit")
def stall_after_commit(session):
    if STALL_AT == "after_commit" and writes["creating"]:
        writes["creating"] = False
        stall_once()


@event.listens_for(db.session, "after_rollback")
def forget_creation(session):
    writes["creating"] = False
