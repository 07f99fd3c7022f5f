"""Every bad body of POST /sms/outbound and POST /webhooks/tests refused where its rule lives, no
HTTP.

A body is read before the view by the resources' body guard (check_json_body: media type, UTF-8,
JSON syntax, and through Werkzeug the size limit), then by flask-smorest's parser with the
endpoint's schema (the body's shape and its fields). Each case is read by those two, in a request
context of the endpoint; tests/api/test_api_bad_input.py proves with one HTTP test per endpoint that
their refusals come out in the error envelope and that nothing is written.
"""

import pytest
from flask import request
from werkzeug.exceptions import HTTPException

from gateway.api.resource import check_json_body
from gateway.errors import HTTP_CODES, ApiError, flatten_messages
from gateway.schemas.outbound_sms import OutboundSmsCreateSchema
from gateway.schemas.webhook import WebhookTestSchema
from tests.bad_input import (
    BAD_SMS_BODIES,
    BAD_TEST_BODIES_REFUSED_BY_THE_SCHEMA,
    SMS_URL,
    TEST_BODIES_WITHOUT_A_URL,
)

TEST_URL = "/api/v1/webhooks/tests"
CASES = [(SMS_URL, OutboundSmsCreateSchema, *case) for case in BAD_SMS_BODIES] + [
    (TEST_URL, WebhookTestSchema, *case) for case in BAD_TEST_BODIES_REFUSED_BY_THE_SCHEMA
]


@pytest.fixture(autouse=True)
def clean_database():
    """No database here: the body is only read, so the per-test emptying of tables is skipped."""
    yield


def read_body(app, url, schema_class, body, content_type):
    """The arguments a POST of `body` would hand its view: the body guard, then the endpoint's
    parser.
    """
    kwargs = {} if body is None else {"data": body}
    if content_type:
        kwargs["content_type"] = content_type
    with app.test_request_context(url, method="POST", **kwargs):
        check_json_body()
        parser = app.blueprints[request.blueprint].ARGUMENTS_PARSER
        return parser.parse(schema_class(), location="json")


def refusal(error):
    """(status, code, fields at fault) of a refusal, as gateway.errors renders it."""
    if isinstance(error, ApiError):
        return error.status, error.code, []
    messages = (getattr(error, "data", None) or {}).get("messages", {})
    return (
        error.code,
        HTTP_CODES[error.code],
        [item["field"] for item in flatten_messages(messages)],
    )


@pytest.mark.parametrize(
    "url, schema_class, body, content_type, status, code, field",
    [case[:2] + case[3:] for case in CASES],
    ids=[f"{case[0].rsplit('/', 1)[1]} {case[2]}" for case in CASES],
)
def test_a_bad_body_is_refused_before_the_view_with_its_status_code_and_field(
    app, url, schema_class, body, content_type, status, code, field
):
    with pytest.raises((ApiError, HTTPException)) as refused:
        read_body(app, url, schema_class, body, content_type)

    got_status, got_code, fields = refusal(refused.value)
    assert (got_status, got_code) == (status, code)
    if field:
        assert any(name == field or name.startswith(field + ".") for name in fields), fields


@pytest.mark.parametrize(
    "body, content_type",
    [case[1:3] for case in TEST_BODIES_WITHOUT_A_URL],
    ids=[case[0] for case in TEST_BODIES_WITHOUT_A_URL],
)
def test_a_webhook_test_body_without_a_url_reaches_the_view_for_the_brands_url(
    app, body, content_type
):
    assert read_body(app, TEST_URL, WebhookTestSchema, body, content_type) == {}
