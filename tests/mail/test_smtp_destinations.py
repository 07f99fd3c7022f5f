"""Where e-mail may go: the webhook destination rule for the SMTP host, at save and at every
connection, and never a foreign server's words shown to the merchant.
"""

import logging
import socket
import ssl
import threading

import pytest

from gateway import destinations
from gateway.domain_errors import ValidationFailed
from gateway.extensions import db
from gateway.mail.models.mail import MailSettings, OutboundMail
from gateway.mail.outbox import send_mail
from gateway.mail.sending import deliver_mail
from gateway.mail.settings import save_mail_settings
from tests.local_servers import smtp_serving
from tests.panel.conftest import post_form

BANNER = "SSH-2.0-InternalVault_7.4 build=secret-42"
HOST = "smtp.shop.test"
REAL_GETADDRINFO = socket.getaddrinfo


class BannerService:
    """An internal TCP service on loopback that is no SMTP server: it greets with BANNER and counts
    the connections it took."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.sendall(BANNER.encode() + b"\r\n")
                conn.settimeout(2)
                try:
                    conn.recv(1024)
                except OSError:
                    pass

    def close(self):
        # Closing alone leaves the thread blocked in accept() on Linux; shutting the listener down
        # wakes it at once.
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive()


@pytest.fixture
def banner_service():
    service = BannerService()
    yield service
    service.close()


@pytest.fixture
def production(app, monkeypatch):
    """The production rule: private destinations refused."""
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)


def stored_settings(brand, host, port):
    """SMTP settings written as they were saved before the rule existed (or under another rule)."""
    db.session.add(
        MailSettings(
            brand_id=brand.id,
            host=host,
            port=port,
            security="none",
            from_address="billing@shop.example",
        )
    )
    db.session.commit()


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "10.0.0.5",
        "169.254.169.254",
        "::1",
        "localhost",
        "localhost.",
        "metadata.google.internal",
        "127.0.0.1.nip.io",
        "2130706433",
    ],
)
def test_a_private_smtp_host_is_refused_on_its_field_when_saved(brand, production, host):
    with pytest.raises(ValidationFailed) as refused:
        save_mail_settings(
            brand,
            {"host": host, "port": 25, "security": "none", "from_address": "a@shop.example"},
        )
    assert refused.value.errors[0]["field"] == "host"
    assert "public servers" in refused.value.message
    assert db.session.execute(db.select(MailSettings)).scalar_one_or_none() is None


def test_the_panel_refuses_a_private_smtp_host_with_the_field_marked(as_admin, production):
    response = post_form(
        as_admin,
        "/panel/settings/email",
        {"host": "127.0.0.1", "port": "6379", "from_address": "billing@shop.example"},
    )
    assert response.status_code == 422
    assert 'id="host-error"' in response.get_data(as_text=True)
    assert db.session.execute(db.select(MailSettings)).scalar_one_or_none() is None


def test_the_test_button_never_connects_to_an_internal_service(
    as_admin, brand, production, banner_service
):
    stored_settings(brand, "127.0.0.1", banner_service.port)
    response = post_form(
        as_admin, "/panel/settings/email/test", {"to": "me@shop.example"}, follow_redirects=True
    )
    page = response.get_data(as_text=True)
    assert "The test e-mail was not sent" in page and "only sent to public servers" in page
    assert "InternalVault" not in page
    assert banner_service.connections == 0


def test_a_foreign_banner_is_never_echoed_only_logged(
    as_admin, brand, banner_service, caplog
):  # private servers allowed (development): the connection is made, its words are not shown
    stored_settings(brand, "127.0.0.1", banner_service.port)
    with caplog.at_level(logging.WARNING, logger="gateway.mail.smtp_client"):
        response = post_form(
            as_admin,
            "/panel/settings/email/test",
            {"to": "me@shop.example"},
            follow_redirects=True,
        )
    page = response.get_data(as_text=True)
    assert banner_service.connections == 1
    assert "did not answer as an SMTP server" in page
    assert "InternalVault" not in page and "secret-42" not in page
    assert "InternalVault" in caplog.text  # the detail is for the server's log
    mail = send_mail(brand.id, "a@example.com", "Hello", "Body")
    db.session.commit()
    assert deliver_mail(mail.id) == "pending"
    last_error = db.session.get(OutboundMail, mail.id).last_error
    assert "did not answer as an SMTP server" in last_error and "InternalVault" not in last_error


class ScriptedDns:
    """DNS for HOST answering from a script (a rebinding attacker's server with a zero TTL); other
    names resolve as usual."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.queries = 0

    def getaddrinfo(self, host, port, *args, **kwargs):
        if host != HOST:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        answer = self.answers[min(self.queries, len(self.answers) - 1)]
        self.queries += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (answer, int(port)))]


@pytest.fixture
def scripted_dns(production, monkeypatch):
    """HOST resolved by a script; 127.0.0.1 (where the test's SMTP server listens) stands for a
    public address and every other address counts as private."""
    dns = ScriptedDns("127.0.0.1")
    monkeypatch.setattr(socket, "getaddrinfo", dns.getaddrinfo)
    monkeypatch.setattr(destinations, "is_public_address", lambda address: address == "127.0.0.1")
    return dns


def test_a_name_that_resolves_to_a_private_address_later_is_refused_at_connect(brand, scripted_dns):
    with smtp_serving() as server:
        server.configure(brand, host=HOST)  # saved while its name answered a public address
        first = send_mail(brand.id, "a@example.com", "First", "Body")
        db.session.commit()
        assert deliver_mail(first.id) == "sent"
        scripted_dns.answers = ["127.0.0.2"]  # the name now answers a private address
        second = send_mail(brand.id, "b@example.com", "Second", "Body")
        db.session.commit()
        assert deliver_mail(second.id) == "pending"
        assert (
            "private, loopback or link-local" in db.session.get(OutboundMail, second.id).last_error
        )
        assert [message["Subject"] for message in server.wait_for(1)] == ["First"]


def test_the_connection_goes_to_the_checked_address_never_to_a_second_answer(brand, scripted_dns):
    with smtp_serving() as server:
        server.configure(brand, host=HOST)
        # The check is answered 127.0.0.1; any later question would get the private 127.0.0.2,
        # where nothing listens.
        scripted_dns.answers, scripted_dns.queries = ["127.0.0.1", "127.0.0.2"], 0
        mail = send_mail(brand.id, "a@example.com", "Pinned", "Body")
        db.session.commit()
        assert deliver_mail(mail.id) == "sent"
        assert scripted_dns.queries == 1
        assert server.wait_for(1)[0]["Subject"] == "Pinned"


class Collecting:
    """An aiosmtpd handler that keeps the subjects of the messages it accepts."""

    def __init__(self):
        self.subjects = []

    async def handle_DATA(self, server, session, envelope):
        from email import message_from_bytes

        self.subjects.append(message_from_bytes(envelope.content)["Subject"])
        return "250 OK"


@pytest.mark.parametrize("certified_name", [HOST, "elsewhere.test"])
def test_starttls_to_the_checked_address_names_and_verifies_the_smtp_host(
    brand, scripted_dns, tmp_path, monkeypatch, certified_name
):
    from aiosmtpd.controller import Controller

    from tests.local_servers import free_port
    from tests.webhooks.test_webhook_http import tls_files

    ca, cert, key = tls_files(tmp_path, certified_name)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    server_names = []
    server_context.sni_callback = lambda tls, name, ctx: server_names.append(name)
    handler = Collecting()
    controller = Controller(
        handler, hostname="127.0.0.1", port=free_port(), tls_context=server_context
    )
    real_context = ssl.create_default_context
    # Trust the test CA instead of the system's.
    monkeypatch.setattr(ssl, "create_default_context", lambda: real_context(cafile=str(ca)))
    controller.start()
    try:
        save_mail_settings(
            brand,
            {
                "host": HOST,
                "port": controller.port,
                "security": "starttls",
                "from_address": "billing@shop.example",
            },
        )
        mail = send_mail(brand.id, "a@example.com", "Over TLS", "Body")
        db.session.commit()
        status = deliver_mail(mail.id)
    finally:
        controller.stop()
    assert server_names == [HOST]  # SNI names the host, not the address connected to
    if certified_name == HOST:
        assert status == "sent" and handler.subjects == ["Over TLS"]
    else:
        last_error = db.session.get(OutboundMail, mail.id).last_error
        assert status == "pending" and handler.subjects == []
        assert last_error == (
            f"Could not talk to {HOST}:{controller.port}: its TLS certificate is not valid for "
            f"{HOST}."
        )
