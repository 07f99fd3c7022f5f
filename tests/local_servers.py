"""Servers a test runs on loopback: a free port, and the app behind a real threaded werkzeug server."""

import socket
import threading
from contextlib import contextmanager

from werkzeug.serving import make_server


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(app):
    """The app behind a threaded werkzeug server on a free 127.0.0.1 port; yields the server (its origin: `origin`)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    server.origin = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
