"""An answer whose empty session was read varies on Cookie, exactly as werkzeug's Vary set writes
it."""

import pytest
from flask import Response, session


@pytest.mark.parametrize(
    "vary, expected",
    [
        (None, ["Cookie"]),
        ("Accept-Encoding", ["Accept-Encoding, Cookie"]),
        ("cookie", ["cookie"]),  # already there, in another case: not repeated
    ],
)
def test_a_read_empty_session_adds_cookie_to_vary_as_werkzeug_would(app, vary, expected):
    with app.test_request_context("/api/v1/payments"):
        session.get("lang")  # read, left empty
        ours, werkzeugs = Response("x"), Response("x")
        for response in (ours, werkzeugs):
            if vary:
                response.headers["Vary"] = vary
        app.session_interface.save_session(app, session._get_current_object(), ours)
        werkzeugs.vary.add("Cookie")
    assert ours.headers.getlist("Vary") == werkzeugs.headers.getlist("Vary") == expected
    assert "Set-Cookie" not in ours.headers


def test_an_api_answer_varies_on_cookie_once(client):
    response = client.get("/api/v1/payments")
    assert response.status_code == 401
    assert response.headers.getlist("Vary") == ["Cookie"]
