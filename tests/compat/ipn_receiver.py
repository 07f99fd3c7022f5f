"""A local HTTP server that keeps each request's headers exactly as spelt on the wire, and its raw
body.

werkzeug (and so pytest-httpserver) normalises header names; the dialects' PHP clients look
them up case-sensitively, so the tests read them as sent, from http.server.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class IpnReceiver:
    """Collects POSTs and GETs (a customer's browser coming back to the shop): [{"method", "path",
    "headers": [(name, value), ...], "raw", "json"}]."""

    def __init__(self, answer_status=200, answer_body=b"OK", ssl_context=None):
        self.received = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.arrived:
                    receiver.received.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": list(self.headers.raw_items()),
                            "raw": raw,
                            "json": json.loads(raw) if raw and is_json(self.headers) else None,
                        }
                    )
                    receiver.arrived.notify_all()
                self.send_response(answer_status)
                self.send_header("Content-Length", str(len(answer_body)))
                self.end_headers()
                self.wfile.write(answer_body)

            do_GET = do_POST  # a GET has no body: Content-Length is absent, the raw body empty

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        # A shop served over https, as a customer's browser coming from our https pages expects.
        if ssl_context is not None:
            self.server.socket = ssl_context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def url(self):
        return f"{self.scheme}://127.0.0.1:{self.server.server_port}/ipn?from=gateway"

    def wait_for(self, count, timeout=20):
        """Block until `count` requests arrived; False on timeout."""
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.received) >= count, timeout)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def is_json(headers):
    """Whether a request says its body is JSON (a browser's form post is not)."""
    return (headers.get("Content-Type") or "").startswith("application/json")


def header_names(request):
    """The header names of a received request, exactly as spelt."""
    return [name for name, _ in request["headers"]]


def header(request, name):
    """The value of a header looked up case-sensitively, as PHP's arrays do; None when absent."""
    return next((value for spelt, value in request["headers"] if spelt == name), None)
