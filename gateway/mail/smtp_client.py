"""An SMTP session to a checked address: the destination rule of webhooks (gateway/destinations.py),
the connection pinned to the addresses checked, TLS for the host name, and failures in our words.

A server's own text (its banner, an error reply) is never shown to the merchant: whatever answers
at a host:port a merchant typed could be some other service, and its words are for the server log.
"""

import errno
import logging
import smtplib
import socket
import ssl

from ..destinations import PRIVATE_ADDRESS, PRIVATE_NAME, UNRESOLVED, checked_host

log = logging.getLogger(__name__)

SMTP_TIMEOUT = 20
# A connection that was never made: the next checked address may take it.
NEVER_CONNECTED = (errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL)
REFUSED_HOST = {
    PRIVATE_NAME: "The SMTP server's name is private (localhost or an internal network's name); "
    "e-mail is only sent to public servers.",
    PRIVATE_ADDRESS: "The SMTP server is on a private, loopback or link-local address; e-mail is "
    "only sent to public servers.",
    UNRESOLVED: "The SMTP server's name does not resolve.",
}


class MailNotSent(Exception):
    """Why an attempt did not hand the message to the SMTP server, in our words: never the server's
    own text, never a secret (kept as the row's last error, shown on the settings page).
    """


class HostnameContext:
    """An SSL context whose every connection is TLS for the host name, whichever address it reached.

    smtplib names the server it connected to for SNI and the certificate check: with a pinned
    connection that is an address, and the certificate is for the name.
    """

    def __init__(self, context, hostname):
        self.context = context
        self.hostname = hostname

    def wrap_socket(self, sock, server_hostname=None, **options):
        """The socket wrapped for `hostname`, whatever smtplib asked."""
        return self.context.wrap_socket(sock, server_hostname=self.hostname, **options)


def smtp_host_refusal(host, port, strict=True):
    """Why the gateway may not connect to this SMTP host, in our words, or None; no DNS needed
    for a name private by its form. `strict` (when connecting) also refuses a name that does not
    resolve.
    """
    refusal, _ = checked_host(host, port, strict)
    return REFUSED_HOST[refusal] if refusal else None


def connect(settings, context):
    """A greeted SMTP client (TLS from the start if so set) at the first checked address that takes
    the connection; MailNotSent when the host is refused.
    """
    refusal, addresses = checked_host(settings.host, settings.port)
    if refusal is not None:
        raise MailNotSent(REFUSED_HOST[refusal])
    targets = addresses or [settings.host]  # None: private servers allowed, resolved by smtplib
    for index, target in enumerate(targets):
        try:
            if settings.security == "tls":
                return smtplib.SMTP_SSL(
                    target, settings.port, timeout=SMTP_TIMEOUT, context=context
                )
            return smtplib.SMTP(target, settings.port, timeout=SMTP_TIMEOUT)
        except OSError as error:
            if index == len(targets) - 1 or error.errno not in NEVER_CONNECTED:
                raise


def open_session(settings, password):
    """A connected client, encrypted and logged in as the settings say; the SMTP or network error
    as raised (in_our_words says it).
    """
    context = HostnameContext(ssl.create_default_context(), settings.host)
    client = connect(settings, context)
    try:
        if settings.security == "starttls":
            client.starttls(context=context)
        if settings.username:
            client.login(settings.username, password or "")
    except BaseException:
        client.close()
        raise
    return client


def in_our_words(error, settings):
    """What failed, said without the server's own text; the server's reply goes to the log."""
    where = f"{settings.host}:{settings.port}"
    if isinstance(error, smtplib.SMTPResponseException):
        log.warning("SMTP %s answered %s: %r", where, error.smtp_code, error.smtp_error[:300])
    else:
        log.warning("SMTP %s: %s", where, error.__class__.__name__)
    code = f" ({error.smtp_code})" if isinstance(error, smtplib.SMTPResponseException) else ""
    if code and not 200 <= error.smtp_code <= 599:
        code = ""
    if isinstance(error, smtplib.SMTPConnectError):
        return f"Could not talk to {where}: it did not answer as an SMTP server{code}."
    if isinstance(error, smtplib.SMTPAuthenticationError):
        return f"The SMTP server refused the login{code}."
    if isinstance(error, smtplib.SMTPSenderRefused):
        return f"The SMTP server refused the from address{code}."
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return "The SMTP server refused the recipient(s): " + ", ".join(error.recipients)
    if isinstance(error, smtplib.SMTPDataError):
        return f"The SMTP server refused the message{code}."
    if isinstance(error, smtplib.SMTPResponseException):
        return f"The SMTP server answered with an error{code}."
    if isinstance(error, smtplib.SMTPNotSupportedError):
        return "The SMTP server does not offer STARTTLS or login; check the security setting."
    if isinstance(error, smtplib.SMTPServerDisconnected):
        return f"Could not talk to {where}: the server closed the connection."
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"Could not talk to {where}: its TLS certificate is not valid for {settings.host}."
    if isinstance(error, ssl.SSLError):
        return f"Could not talk to {where}: the TLS handshake failed; check the security setting."
    if isinstance(error, ConnectionRefusedError):
        return f"Could not talk to {where}: the connection was refused."
    if isinstance(error, (TimeoutError, socket.timeout)):
        return f"Could not talk to {where}: no answer within {SMTP_TIMEOUT} s."
    if isinstance(error, socket.gaierror):
        return f"Could not talk to {where}: the name does not resolve."
    return f"Could not talk to {where}: a network error ({error.__class__.__name__})."
