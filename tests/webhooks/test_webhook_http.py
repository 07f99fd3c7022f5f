"""A webhook attempt on the wire: it goes to the address that was checked, and ends after
WEBHOOK_TIMEOUT.
"""

import socket
import ssl
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gateway import destinations
from gateway.extensions import db
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookAttempt, WebhookDelivery
from gateway.webhooks.transport import http_session
from tests.factories import completed_payment
from tests.webhook_support import TRICKLED_HEADS, WebhookReceiver, timed, trickling  # noqa: F401,F811 - fixture

HOST = "merchant.test"
PUBLIC = (
    "127.0.0.1"  # stands for the merchant's public server; every other address counts as private
)
REAL_GETADDRINFO = socket.getaddrinfo


class ScriptedDns:
    """DNS for HOST that answers from a script, as a rebinding attacker's server with a zero TTL
    does.
    """

    def __init__(self, *answers):
        self.answers = list(answers)
        self.queries = 0

    def getaddrinfo(self, host, port, *args, **kwargs):
        if host != HOST:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        answer = self.answers[min(self.queries, len(self.answers) - 1)]
        self.queries += 1
        return [
            (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port)))
            for address in ([answer] if isinstance(answer, str) else answer)
        ]


@pytest.fixture
def refusing_private(app, monkeypatch):
    """Private callbacks refused; HOST resolved by a scripted DNS that answers PUBLIC unless a test
    says otherwise.
    """
    dns = ScriptedDns(PUBLIC)
    monkeypatch.setattr(socket, "getaddrinfo", dns.getaddrinfo)
    monkeypatch.setattr(destinations, "is_public_address", lambda address: address == PUBLIC)
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    return dns


@pytest.fixture
def receivers(brand):
    """Start verifying receivers; each must never see a bad signature, and all are closed after the
    test.
    """
    started = []

    def start(**options):
        started.append(WebhookReceiver(brand.webhook_secret, **options))
        return started[-1]

    yield start
    for receiver in started:
        receiver.close()
        assert receiver.rejected == []


def delivery_to(brand, url):
    """A pending delivery of a completed payment to `url` (the factory stores the URL unchecked)."""
    payment = completed_payment(brand=brand, callback_url=url)
    return db.session.execute(
        db.select(WebhookDelivery).where(WebhookDelivery.payment_id == payment.id)
    ).scalar_one()


def attempt_log(delivery_id):
    db.session.expire_all()
    return (
        db.session.execute(
            db.select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id == delivery_id)
            .order_by(WebhookAttempt.id)
        )
        .scalars()
        .all()
    )


def test_a_host_rebinding_to_a_private_address_after_the_check_gets_it_at_the_checked_one(
    brand, receivers, refusing_private
):
    internal = receivers(
        host="127.0.0.2"
    )  # a private service the attacker wants the gateway to call
    public = receivers(host=PUBLIC, port=internal.port)
    delivery = delivery_to(brand, f"http://{HOST}:{public.port}/hooks")
    refusing_private.answers = [
        PUBLIC,
        "127.0.0.2",
    ]  # public for the check, private for any later lookup

    assert deliver_webhook(delivery.id) == "sent"
    assert internal.received == []
    [hit] = public.received
    assert hit["headers"]["Host"] == f"{HOST}:{public.port}"
    assert refusing_private.queries == 1


# The host's first address: nothing listens there, like an IPv6 address this server cannot reach.
UNREACHABLE = "127.0.0.3"


@pytest.fixture
def two_public_addresses(refusing_private, monkeypatch):
    """HOST resolves to UNREACHABLE and then PUBLIC, both public addresses as far as the check is
    concerned.
    """
    refusing_private.answers = [(UNREACHABLE, PUBLIC)]
    monkeypatch.setattr(
        destinations, "is_public_address", lambda address: address in (UNREACHABLE, PUBLIC)
    )
    return refusing_private


def test_a_host_whose_first_address_takes_no_connection_gets_the_webhook_at_the_next(
    brand, receivers, two_public_addresses
):
    receiver = receivers(host=PUBLIC)
    delivery = delivery_to(brand, f"http://{HOST}:{receiver.port}/hooks")

    assert deliver_webhook(delivery.id) == "sent"
    [hit] = receiver.received
    assert hit["headers"]["Host"] == f"{HOST}:{receiver.port}"
    [attempt] = attempt_log(delivery.id)
    assert attempt.response_status == 200 and attempt.error is None


@pytest.fixture
def dropping_server():
    """Start a server on UNREACHABLE, at a given port, that takes each connection, reads the request
    and hangs up without answering; the requests it took.
    """
    listeners, taken = [], []

    def start(port):
        listener = socket.create_server((UNREACHABLE, port))
        listeners.append(listener)

        def serve():
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:  # closed at the end of the test
                    return
                with connection:
                    taken.append(connection.recv(65536))

        threading.Thread(target=serve, daemon=True).start()
        return taken

    yield start
    for listener in listeners:
        listener.close()


def test_a_request_that_reached_an_address_is_never_sent_to_the_next(
    brand, receivers, two_public_addresses, dropping_server
):
    # The receiver takes a free port on PUBLIC first; UNREACHABLE (127.0.0.3) then has it free too,
    # where the reverse order could meet another process on PUBLIC's port.
    receiver = receivers(host=PUBLIC, port=0)
    port = receiver.port
    taken = dropping_server(port)
    delivery = delivery_to(brand, f"http://{HOST}:{port}/hooks")

    assert deliver_webhook(delivery.id) == "pending"
    assert len(taken) == 1 and taken[0].startswith(b"POST /hooks")
    assert receiver.received == []  # a second address could have delivered the same event twice
    [attempt] = attempt_log(delivery.id)
    assert attempt.response_status is None and attempt.error


class KeepAliveHandler(BaseHTTPRequestHandler):
    """A receiver that keeps connections open (HTTP/1.1) and notes the client port and Host of each
    request.
    """

    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append((self.client_address[1], self.headers["Host"]))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *args):
        """Quiet."""


@pytest.fixture
def keep_alive_receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeepAliveHandler)
    server.seen = []
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    yield server
    server.shutdown()
    server.server_close()


def test_deliveries_to_a_checked_address_reuse_one_connection(
    brand, keep_alive_receiver, refusing_private
):
    port = keep_alive_receiver.server_port
    first, second = (delivery_to(brand, f"http://{HOST}:{port}/hooks") for _ in range(2))

    assert [deliver_webhook(first.id), deliver_webhook(second.id)] == ["sent", "sent"]
    [(client_port, host), again] = keep_alive_receiver.seen
    assert again == (client_port, host) == (client_port, f"{HOST}:{port}")


def tls_files(directory, name):
    """A throwaway CA and a server certificate for `name` that it signed: (ca.pem, cert.pem,
    key.pem).
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.now(timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Webhook test CA")])

    def certificate(subject, public_key, *extensions):
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
        )
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(ca_key, hashes.SHA256())

    ca = certificate(
        ca_name,
        ca_key.public_key(),
        (x509.BasicConstraints(ca=True, path_length=None), True),
        (x509.KeyUsage(False, False, False, False, False, True, True, False, False), True),
        (x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False),
    )
    leaf = certificate(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]),
        key.public_key(),
        (x509.SubjectAlternativeName([x509.DNSName(name)]), False),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
        (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False),
    )
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.mark.parametrize("certified_name", [HOST, "elsewhere.test"])
def test_https_to_the_checked_address_names_and_verifies_the_callback_host(
    brand, receivers, refusing_private, tmp_path, monkeypatch, certified_name
):
    ca, cert, key = tls_files(tmp_path, certified_name)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server_names = []
    context.sni_callback = lambda tls, name, ctx: server_names.append(name)
    receiver = receivers(ssl_context=context)
    monkeypatch.setattr(
        http_session(), "verify", str(ca)
    )  # trust the test CA instead of the public ones
    delivery = delivery_to(brand, f"https://{HOST}:{receiver.port}/hooks")

    result = deliver_webhook(delivery.id)

    assert server_names == [HOST]
    if certified_name == HOST:
        assert result == "sent"
        assert receiver.received[0]["headers"]["Host"] == f"{HOST}:{receiver.port}"
    else:
        assert result == "pending"
        assert receiver.received == []
        assert "SSLError" in attempt_log(delivery.id)[0].error


@TRICKLED_HEADS
def test_a_receiver_trickling_its_answer_is_cut_off_at_the_webhook_timeout(
    app, brand, monkeypatch, trickling, head
):
    monkeypatch.setitem(app.config, "WEBHOOK_TIMEOUT", 0.5)
    delivery = delivery_to(brand, trickling(head).url)

    result, elapsed = timed(deliver_webhook, delivery.id)

    assert result == "pending"
    assert elapsed < 2
    [attempt] = attempt_log(delivery.id)
    assert attempt.error == "No answer within 0.5 s."
    assert 400 <= attempt.duration_ms < 2000


def test_an_answer_cut_short_is_a_failed_attempt(brand, trickling):
    delivery = delivery_to(
        brand, trickling(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", drips=0).url
    )

    result = deliver_webhook(delivery.id)

    assert result == "pending"
    [attempt] = attempt_log(delivery.id)
    assert attempt.response_status is None  # an answer cut short is no answer
    assert "IncompleteRead" in attempt.error or "Connection broken" in attempt.error


class AnswerAtTheDeadline:
    """A receiver that sends `early` at once and `late` after `delay` seconds, then hangs up."""

    def __init__(self, early, late, delay):
        self.early, self.late, self.delay = early, late, delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stopped = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hooks"

    def serve(self):
        try:
            connection, _ = self.listener.accept()
        except OSError:  # closed before any attempt came
            return
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(self.early)
                if not self.stopped.wait(self.delay):
                    connection.sendall(self.late)
            except OSError:  # the sender hung up at its deadline
                pass

    def close(self):
        self.stopped.set()
        self.listener.close()


ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"


@pytest.mark.parametrize(
    "early, late, delay",
    [
        (ANSWER[:-2], ANSWER[-2:], 0.5),  # the status at once, the body right at the deadline
        (ANSWER[:-2], ANSWER[-2:], 1.0),  # the status at once, the body after the deadline
        (b"", ANSWER, 0.5),  # the whole answer right at the deadline
    ],
    ids=["body-at-deadline", "body-late", "answer-at-deadline"],
)
def test_an_attempt_at_the_deadline_is_recorded_as_answered_or_not_never_both(
    app, brand, monkeypatch, early, late, delay
):
    monkeypatch.setitem(app.config, "WEBHOOK_TIMEOUT", 0.5)
    server = AnswerAtTheDeadline(early, late, delay)
    try:
        delivery = delivery_to(brand, server.url)
        result = deliver_webhook(delivery.id)
    finally:
        server.close()

    [attempt] = attempt_log(delivery.id)
    row = db.session.get(WebhookDelivery, delivery.id)
    if attempt.error is None:  # answered in full before the deadline cut in
        assert (result, attempt.response_status, attempt.response_body) == ("sent", 200, "OK")
    else:
        assert attempt.error == "No answer within 0.5 s."
        assert (result, attempt.response_status, attempt.response_body) == ("pending", None, None)
    assert (row.response_status, row.response_body) == (
        attempt.response_status,
        attempt.response_body,
    )
    if delay > 0.5:
        assert attempt.error is not None
