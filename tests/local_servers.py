"""Servers a test runs on loopback: a free port, and the app behind a real threaded werkzeug
server."""

import logging
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
    """The app behind a threaded werkzeug server on a free 127.0.0.1 port; yields the server (its
    origin: `origin`).
    """
    server = make_server("127.0.0.1", 0, app, threaded=True)
    server.origin = f"http://127.0.0.1:{server.server_port}"
    # Polled every 50 ms, not werkzeug's 500: shutdown() waits for the poll after the last request.
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="live-server",
        daemon=True,
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


class LocalSmtpServer:
    """A real SMTP server (aiosmtpd) on a free loopback port that keeps every message it accepts.

    `messages` holds `email.message.EmailMessage` objects (policy.default, so `get_content()` and
    `iter_attachments()` work); `envelopes` the raw (mail_from, rcpt_tos, bytes). With `users`
    ({name: password}) it asks for AUTH LOGIN/PLAIN, without TLS (loopback only).
    """

    def __init__(self, users=None):
        from aiosmtpd.controller import Controller

        logging.getLogger("mail.log").setLevel(logging.WARNING)  # aiosmtpd logs every command

        self.users = users
        self.messages = []
        self.envelopes = []
        self.logins = []
        self.arrived = threading.Condition()
        options = {}
        if users is not None:
            options = {
                "authenticator": self.authenticate,
                "auth_required": False,  # offered, and refused when wrong (True warns without TLS)
                "auth_require_tls": False,
            }
        self.controller = Controller(self, hostname="127.0.0.1", port=free_port(), **options)

    @property
    def port(self):
        return self.controller.port

    def authenticate(self, server, session, envelope, mechanism, auth_data):
        """aiosmtpd's authenticator: the name and password must be one of `users`."""
        from aiosmtpd.smtp import AuthResult, LoginPassword

        if isinstance(auth_data, LoginPassword):
            name, password = auth_data.login.decode(), auth_data.password.decode()
            if self.users.get(name) == password:
                self.logins.append(name)
                return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    async def handle_DATA(self, server, session, envelope):
        """Keep the message and wake anyone waiting for it."""
        from email import message_from_bytes, policy

        message = message_from_bytes(
            envelope.original_content or envelope.content, policy=policy.default
        )
        with self.arrived:
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
            self.messages.append(message)
            self.arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count=1, timeout=10):
        """The messages once at least `count` have arrived; AssertionError after `timeout`
        seconds."""
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.messages) >= count, timeout):
                raise AssertionError(f"expected {count} e-mail(s), got {len(self.messages)}")
            return list(self.messages)

    def configure(self, brand, **overrides):
        """Save the brand's SMTP settings pointing at this server (committed)."""
        from gateway.mail.settings import save_mail_settings

        values = {
            "host": "127.0.0.1",
            "port": self.port,
            "security": "none",
            "from_address": "billing@shop.example",
            "from_name": brand.name,
        }
        if self.users:
            name, password = next(iter(self.users.items()))
            values.update(username=name, password=password)
        values.update(overrides)
        save_mail_settings(brand, values)


@contextmanager
def smtp_serving(users=None):
    """A LocalSmtpServer, started for the block and stopped after it."""
    server = LocalSmtpServer(users=users)
    server.controller.start()
    try:
        yield server
    finally:
        server.controller.stop()
