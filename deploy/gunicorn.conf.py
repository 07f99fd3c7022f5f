"""gunicorn's settings for the gateway's web service: deploy/systemd/gateway-web.service runs
`gunicorn -c` it.
"""

import multiprocessing
import os

# nginx on the same machine is the only client; the port is not reachable from outside.
bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", 2 * multiprocessing.cpu_count() + 1))
# A request still running after this many seconds is killed; nginx's proxy timeouts (60 s) are
# longer, so the client sees the app's answer or gunicorn's, never a proxy timeout first.
timeout = 30
# On stop or reload, requests in flight get this long to finish (systemd's TimeoutStopSec is
# longer).
graceful_timeout = 25
keepalive = 5
# The app is built once, in the master, and each worker is a fork of it: a worker that dies is
# replaced in a fraction of a second, not after importing and building the app again (2 to 3 s of
# CPU each, every worker at once after a crash, on the same cores). app.py settles the heap
# (gc.freeze) before the fork, so a worker's collections never touch what the app holds. New code
# needs a restart, not a HUP (docs/deployment.md, "The services").
preload_app = True
# Logs go to stdout/stderr, which systemd hands to journald (`journalctl -u gateway-web`).
errorlog = "-"
accesslog = None


def post_fork(server, worker):
    """A new worker opens database connections of its own: none of the master's is shared."""
    app = server.app.wsgi()  # the master's (preload_app): a worker does not build it again
    db = getattr(app, "extensions", {}).get("sqlalchemy")
    if db is not None:
        with app.app_context():
            for engine in db.engines.values():
                engine.dispose(close=False)  # the master's connections stay the master's
