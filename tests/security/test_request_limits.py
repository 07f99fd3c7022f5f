"""Issue 14, finding 5: request-level limits: a chunked body over the limit is 413 on a real server,
405 answers say which methods are allowed, and one request cannot make a huge list of field
errors."""

import io
import json
import socket

import pytest

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from tests.factories import UserFactory
from tests.gunicorn_support import Gunicorn

LIMIT = 1024 * 1024  # MAX_CONTENT_LENGTH


def chunked_post(origin, path, headers, body, chunk=64 * 1024):
    """POST `body` with Transfer-Encoding: chunked over a raw socket; returns (status, headers,
    body).
    """
    host, port = origin.removeprefix("http://").split(":")
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        try:
            for start in range(0, len(body), chunk):
                piece = body[start : start + chunk]
                sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
            # Half-close: werkzeug's server drains what is left of a refused body until end of
            # input.
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before reading everything: fine
        answer = b""
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            answer += data
    head, _, payload = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    answer_headers = {
        name.strip().lower(): value.strip()
        for name, value in (line.split(":", 1) for line in header_lines if ":" in line)
    }
    return int(status_line.split()[1]), answer_headers, payload


def oversized_payment():
    """A syntactically valid payment whose body is just over the limit."""
    return json.dumps(
        {"amount": "500.00", "currency": "BDT", "customer_name": "n" * (LIMIT + 10)}
    ).encode()


@pytest.fixture
def gunicorn_server(app, tmp_path):
    """The real app under gunicorn, sharing the test database."""
    server = Gunicorn(
        "app:app",
        {
            "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": "",
            "APP_ENV": "development",
        },
        log_path=tmp_path / "gunicorn.log",
    )
    yield server
    server.stop()


def test_a_chunked_body_over_the_limit_is_413_on_the_werkzeug_server(live_server, auth):
    status, headers, body = chunked_post(live_server, "/api/v1/payments", auth, oversized_payment())
    assert status == 413, body[:300]
    assert json.loads(body)["code"] == "PAYLOAD_TOO_LARGE"
    assert db.session.execute(db.select(Payment)).first() is None


def test_a_chunked_body_over_the_limit_is_413_under_gunicorn(gunicorn_server, auth):
    status, headers, body = chunked_post(
        gunicorn_server.url, "/api/v1/payments", auth, oversized_payment()
    )
    assert status == 413, body[:300]
    assert json.loads(body)["code"] == "PAYLOAD_TOO_LARGE"
    assert db.session.execute(db.select(Payment)).first() is None


def test_a_chunked_body_under_the_limit_still_creates_the_payment(live_server, auth):
    body = json.dumps({"amount": "500.00", "currency": "BDT"}).encode()
    status, headers, answer = chunked_post(live_server, "/api/v1/payments", auth, body, chunk=7)
    assert status == 201, answer[:300]


@pytest.mark.parametrize(
    "method, path, allowed",
    [
        ("delete", "/api/v1/payments", {"GET", "POST"}),
        ("put", "/api/v1/payments/some-id/cancel", {"POST"}),
        ("get", "/checkout/some-token/claim", {"POST"}),
        ("post", "/healthz", {"GET", "HEAD"}),
        ("delete", "/panel/sign-in", {"GET", "POST"}),
    ],
)
def test_a_405_says_which_methods_the_address_takes(client, auth, method, path, allowed):
    response = getattr(client, method)(path, headers=auth)
    assert response.status_code == 405
    assert allowed <= {name.strip() for name in response.headers["Allow"].split(",")}
    if path.startswith("/api/"):
        assert response.get_json()["code"] == "METHOD_NOT_ALLOWED"


def test_a_megabyte_of_bad_metadata_keys_answers_a_short_list_of_errors(client, auth):
    bad_keys = {f"{index:041d}": 1 for index in range(20_000)}  # 41 characters: one over the limit
    body = json.dumps({"amount": "500.00", "currency": "BDT", "metadata": bad_keys})
    assert len(body) < LIMIT

    response = client.post(
        "/api/v1/payments", data=body, content_type="application/json", headers=auth
    )

    assert response.status_code == 422
    answer = response.get_json()
    assert answer["code"] == "VALIDATION_ERROR"
    assert len(answer["errors"]) == 50
    assert all(error["field"].startswith("metadata.") for error in answer["errors"])
    assert "The first 50 of 20000 are listed." in answer["message"]
    assert len(response.get_data()) < 20_000
    assert db.session.execute(db.select(Payment)).first() is None


def test_a_megabyte_list_of_bad_scopes_answers_a_short_list_of_errors(client, brand, make_key):
    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    admin = {
        **make_key(brand, scopes=("read", "write", "admin")),
        "X-Super-Admin-Email": "root@example.com",
    }
    body = json.dumps({"label": "flood", "scopes": ["x"] * 200_000})
    assert len(body) < LIMIT

    response = client.post(
        "/api/v1/api-keys", data=body, content_type="application/json", headers=admin
    )

    assert response.status_code == 422
    assert len(response.get_json()["errors"]) <= 50
    assert len(response.get_data()) < 20_000


def test_long_field_names_and_messages_are_shortened_in_the_answer(client, auth):
    body = json.dumps({"amount": "500.00", "currency": "BDT", "metadata": {"x" * 500_000: 1}})

    response = client.post(
        "/api/v1/payments", data=body, content_type="application/json", headers=auth
    )

    assert response.status_code == 422
    [error] = response.get_json()["errors"]
    assert len(error["field"]) == 120 and error["field"].endswith("…")
    assert len(response.get_data()) < 2_000


class CountingInput(io.BytesIO):
    """A request body that remembers how far the app read it."""


def post_with_unknown_key(client, body):
    """POST `body` to /api/v1/payments with a key nobody issued; returns (answer, the body's
    stream)."""
    stream = CountingInput(body)
    answer = client.post(
        "/api/v1/payments",
        input_stream=stream,
        content_length=len(body),
        content_type="application/json",
        headers={"Authorization": "Bearer gw_live_unknown"},
    )
    return answer, stream


def test_a_body_answered_unread_is_read_to_its_end(client):
    # An unknown key is refused before the body is parsed; gunicorn then closes the connection, and
    # a socket closed with bytes unread is reset: nginx, still sending, answered 502 for the 401.
    body = json.dumps({"pad": "x" * 200_000}).encode()
    answer, stream = post_with_unknown_key(client, body)
    assert answer.status_code == 401
    assert stream.tell() == len(body)


def test_a_body_over_the_limit_is_left_unread(client):
    # Reading it is what the limit spares the server: the answer goes out with the body where it
    # was.
    answer, stream = post_with_unknown_key(client, b"x" * (LIMIT + 1))
    assert answer.status_code == 401
    assert stream.tell() == 0


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/checkout/%00"),
        ("get", "/pay/%00"),
        ("get", "/invoice/%00"),
        ("get", "/invoice/%00/pdf"),
        ("get", "/compat/return/%00"),
        ("post", "/compat/return/%00"),
        ("post", "/api/forwarders/%00/sms"),
    ],
)
def test_a_path_argument_no_row_can_hold_is_404_before_any_query(
    client, brand, sql_statements, method, path
):
    response = getattr(client, method)(path)

    assert response.status_code == 404
    assert sql_statements == []
