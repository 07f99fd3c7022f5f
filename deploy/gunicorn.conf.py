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
# Logs go to stdout/stderr, which systemd hands to journald (`journalctl -u gateway-web`).
errorlog = "-"
accesslog = None
