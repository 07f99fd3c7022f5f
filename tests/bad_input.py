"""Shared pieces of the bad-input walls: raw bodies, the cases every JSON body answers alike, the
envelope check.
"""

import json

JSON = "application/json"
OVER_ONE_MB = 1024 * 1024 + 1
# (id, raw JSON value) that is no e-mail address.
BAD_EMAILS = [
    ("no at", '"rahim.example.com"'),
    ("no domain", '"rahim@"'),
    ("no user", '"@example.com"'),
    ("space", '"ra him@example.com"'),
    ("two ats", '"a@b@example.com"'),
    ("empty", '""'),
    ("blank", '" "'),
    ("huge", '"' + "a" * 300 + '@example.com"'),
    ("huge domain", '"a@' + "b" * 100_000 + '.com"'),
    ("-1", '"-1"'),
    ("0", '"0"'),
    ("1e3", '"1e3"'),
    ("NaN", '"NaN"'),
    ("number", "42"),
    ("huge number", "1" + "0" * 40),
    ("NaN literal", "NaN"),
    ("bool", "true"),
    ("list", '["rahim@example.com"]'),
    ("object", '{"a": 1}'),
    ("nul", '"rahim\\u0000@example.com"'),
    ("lone surrogate", '"\\ud800@example.com"'),
    ("newline", '"rahim@example.com\\nBcc: x@example.com"'),
]
# (id, raw JSON value) that is no telephone number.
BAD_PHONES = [
    ("short", '"123"'),
    ("letters", '"+880ABCDEFGHIJ"'),
    ("unknown country", '"+9991234567"'),
    ("too long", '"+88017123456789012345"'),
    ("empty", '""'),
    ("blank", '" "'),
    ("-1", '"-1"'),
    ("0", '"0"'),
    ("1.001", '"1.001"'),
    ("1e3", '"1e3"'),
    ("NaN", '"NaN"'),
    ("Infinity", '"Infinity"'),
    ("number", "8801712345678"),
    ("huge number", "1" + "0" * 40),
    ("huge string", '"' + "1" * 100_000 + '"'),
    ("1e400", "1e400"),
    ("bool", "true"),
    ("list", '["+8801712345678"]'),
    ("nul", '"+880171234\\u00005678"'),
    (
        "fullwidth digits",
        '"\uff0b\uff18\uff18\uff10\uff11\uff17\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18"',
    ),
]


# What no list takes, as raw query values (percent-encoded as they travel), by kind of parameter.
BAD_NUMBERS = [
    "-1",
    "0",
    "1.001",
    "1.5",
    "1e3",
    "NaN",
    "Infinity",
    "99999999999999999999",
    "9" * 5000,
    "ten",
    "",
    "%00",
    "0x10",
]
BAD_DATES = [
    "yesterday",
    "2030-13-01T00:00:00Z",
    "2030-02-30",
    "2030-01-01T25:00:00Z",
    "2030-01-01T00:00:00%2B25:00",
    "1700000000",
    "-1",
    "0",
    "1.001",
    "1e3",
    "NaN",
    "99999999999999999999",
    "9" * 5000,
    "",
    "%00",
    "0001-01-01T00:00:00%2B14:00",
    "9999-12-31T23:59:59-14:00",
]
TEXT_FILTER_LIMITS = {"reference": 255, "provider": 20, "trx_id": 20, "email": 254, "q": 200}


def bad_query_values(name):
    """What no list takes for query parameter `name`."""
    if name in ("page", "per_page"):
        return BAD_NUMBERS + (["101", "1000000"] if name == "per_page" else ["100001"])
    if name in ("from", "to"):
        return BAD_DATES
    if name == "status":
        return ["bogus", "COMPLETED", "Queued", "", "-1", "0", "NaN", "%00", "s" * 100_000]
    if name == "phone":
        return [
            "12",
            "abc",
            "-1",
            "0",
            "1e3",
            "NaN",
            "99999999999999999999",
            "1" * 100_000,
            "",
            "%00",
            "%2B880ABCDEFGHIJ",
        ]
    limit = TEXT_FILTER_LIMITS[name]
    return ["", "x" * (limit + 1), "x" * 100_000, "%00", "a%00b"]


# Every route that takes an id in its path: (method, path with {id}, the resource's 404 code).
BY_ID = [
    ("get", "/api/v1/payments/{id}", "PAYMENT_NOT_FOUND"),
    ("post", "/api/v1/payments/{id}/cancel", "PAYMENT_NOT_FOUND"),
    ("get", "/api/v1/transactions/{id}", "TRANSACTION_NOT_FOUND"),
    ("get", "/api/v1/refunds/{id}", "REFUND_NOT_FOUND"),
    ("get", "/api/v1/customers/{id}", "CUSTOMER_NOT_FOUND"),
    ("patch", "/api/v1/customers/{id}", "CUSTOMER_NOT_FOUND"),
    ("delete", "/api/v1/customers/{id}", "CUSTOMER_NOT_FOUND"),
    ("delete", "/api/v1/api-keys/{id}", "API_KEY_NOT_FOUND"),
    ("get", "/api/v1/webhooks/deliveries/{id}", "WEBHOOK_DELIVERY_NOT_FOUND"),
    ("post", "/api/v1/webhooks/deliveries/{id}/retry", "WEBHOOK_DELIVERY_NOT_FOUND"),
    ("post", "/api/v1/sms/outbound/{id}/retry", "OUTBOUND_SMS_NOT_FOUND"),
]
# Ids in a path that no row has, percent-encoded as they travel.
BAD_IDS = [
    "0",
    "-1",
    "1.5",
    "1e3",
    "NaN",
    "2147483648",
    "99999999999999999999",
    "9" * 5000,
    "x" * 1000,
    "%00",
    "1%00",
    "%ED%A0%80",
    "%FF",
    "%C2%B2",
    "%D9%A1",
    "%20",
    "null",
    "00000000-0000-4000-8000-000000000000",
]


# The ids the path guard (gateway/api/resource.py) lets through to the resource's own lookup:
# the others hold a NUL character, which PostgreSQL cannot even compare.
BAD_IDS_PAST_THE_GUARD = [ident for ident in BAD_IDS if "%00" not in ident]


def routed_id(app, method, path, ident):
    """The id as Flask's routing hands it to the view: percent-decoded, bad UTF-8 replaced."""
    from flask import request

    with app.test_request_context(path.format(id=ident), method=method.upper()):
        (value,) = request.view_args.values()
        return value


def raw_body(good, **raw):
    """`good` as JSON text with some fields replaced by raw JSON fragments; a None fragment drops
    the field.
    """
    parts = [
        f"{json.dumps(key)}: {json.dumps(value)}" for key, value in good.items() if key not in raw
    ]
    parts += [
        f"{json.dumps(key)}: {fragment}" for key, fragment in raw.items() if fragment is not None
    ]
    return "{" + ", ".join(parts) + "}"


def body_cases(good, padded_field):
    """(id, body, content type, status, code, field at fault) that any JSON body endpoint refuses
    alike.

    `good` is a body the endpoint accepts; `padded_field` is a string field of it that can grow past
    1 MB.
    """
    text = json.dumps(good)
    return [
        ("invalid json", text[:-1] + ", ", JSON, 400, "INVALID_JSON", None),
        ("single quotes", text.replace('"', "'"), JSON, 400, "INVALID_JSON", None),
        ("trailing comma", text[:-1] + ", }", JSON, 400, "INVALID_JSON", None),
        ("NUL byte outside a string", text[:-1] + "\x00}", JSON, 400, "INVALID_JSON", None),
        (
            "utf-16 body",
            text.encode("utf-16"),
            JSON + "; charset=utf-16",
            400,
            "INVALID_JSON",
            None,
        ),
        ("utf-16 body without charset", text.encode("utf-16-le"), JSON, 400, "INVALID_JSON", None),
        (
            "latin-1 body",
            text[:-1].encode() + b', "x": "caf\xe9"}',
            JSON + "; charset=iso-8859-1",
            400,
            "INVALID_JSON",
            None,
        ),
        ("utf-8 byte order mark", b"\xef\xbb\xbf" + text.encode(), JSON, 400, "INVALID_JSON", None),
        ("nested 100000 deep", "[" * 100_000 + "]" * 100_000, JSON, 400, "INVALID_JSON", None),
        (
            "integer of 5000 digits",
            text[:-1] + ', "x": 1' + "0" * 5000 + "}",
            JSON,
            400,
            "INVALID_JSON",
            None,
        ),
        (
            "form encoded",
            "&".join(f"{key}={value}" for key, value in good.items()),
            "application/x-www-form-urlencoded",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        ("json as text", text, "text/plain", 415, "UNSUPPORTED_MEDIA_TYPE", None),
        ("json without a content type", text, None, 415, "UNSUPPORTED_MEDIA_TYPE", None),
        (
            "multipart",
            "--x\r\n\r\n" + text + "\r\n--x--",
            "multipart/form-data; boundary=x",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        ("array", f"[{text}]", JSON, 422, "VALIDATION_ERROR", "body"),
        ("string", json.dumps(text), JSON, 422, "VALIDATION_ERROR", "body"),
        ("number", "5", JSON, 422, "VALIDATION_ERROR", "body"),
        ("true", "true", JSON, 422, "VALIDATION_ERROR", "body"),
        ("null", "null", JSON, 422, "VALIDATION_ERROR", "body"),
        (
            "body over 1 MB",
            raw_body(good, **{padded_field: json.dumps("x" * OVER_ONE_MB)}),
            JSON,
            413,
            "PAYLOAD_TOO_LARGE",
            None,
        ),
    ]


def send(client, method, url, headers, body, content_type):
    """A request with a raw body (None: no body at all) and a content type (None: no header)."""
    kwargs = {} if body is None else {"data": body}
    if content_type:
        kwargs["content_type"] = content_type
    return client.open(url, method=method.upper(), headers=headers, **kwargs)


def assert_refused(response, status, code, field=None):
    """A 4xx in the documented error envelope with the given code, naming `field` when one is at
    fault.
    """
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    body = response.get_json()
    assert isinstance(body["message"], str) and body["message"]
    # The companion app shows `error` when it is text: under its prefix `error` is the message.
    mobile = response.request.path.startswith("/api/mobile/")
    assert body["success"] is False and body["error"] == (body["message"] if mobile else True), body
    assert body["code"] == code, body
    for error in body.get("errors", []):
        assert set(error) == {"field", "code", "message"}, error
    if field:
        fields = [error["field"] for error in body["errors"]]
        assert any(name == field or name.startswith(field + ".") for name in fields), fields


# --- the bodies of POST /sms/outbound and POST /webhooks/tests ---------------------------------

SMS_URL = "/api/v1/sms/outbound"
GOOD_SMS = {"to": "+8801712345678", "body": "Your order ORDER-1 has shipped."}
BAD_SMS_TEXTS = [
    ("missing", None),
    ("null", "null"),
    ("empty", '""'),
    ("too long", '"' + "x" * 1001 + '"'),
    ("huge", '"' + "x" * 100_000 + '"'),
    ("number", "42"),
    ("-1", "-1"),
    ("1.001", "1.001"),
    ("1e3", "1e3"),
    ("NaN literal", "NaN"),
    ("huge number", "1" + "0" * 40),
    ("bool", "true"),
    ("list", '["hi"]'),
    ("object", '{"text": "hi"}'),
    ("nul", '"a\\u0000b"'),
    ("lone surrogate", '"\\ud800"'),
]
# (id, body, content type, status, code, field at fault)
BAD_SMS_BODIES = (
    body_cases(GOOD_SMS, "body")
    + [
        ("no body", None, None, 422, "VALIDATION_ERROR", "to"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "body"),
        ("to missing", raw_body(GOOD_SMS, to=None), JSON, 422, "VALIDATION_ERROR", "to"),
        ("to null", raw_body(GOOD_SMS, to="null"), JSON, 422, "VALIDATION_ERROR", "to"),
    ]
    + [
        (f"to {label}", raw_body(GOOD_SMS, to=raw), JSON, 422, "VALIDATION_ERROR", "to")
        for label, raw in BAD_PHONES
    ]
    + [
        (f"body {label}", raw_body(GOOD_SMS, body=raw), JSON, 422, "VALIDATION_ERROR", "body")
        for label, raw in BAD_SMS_TEXTS
    ]
)


GOOD_TEST = {"url": "https://shop.example/hooks"}
BAD_URLS = [
    ("ftp", '"ftp://shop.example/hooks"'),
    ("relative", '"/hooks"'),
    ("javascript", '"javascript:alert(1)"'),
    ("data", '"data:text/html,hi"'),
    ("no scheme", '"shop.example/hooks"'),
    ("words", '"not a url"'),
    ("too long", '"https://shop.example/' + "a" * 2048 + '"'),
    ("huge", '"https://' + "a" * 100_000 + '.example"'),
    ("spaces", '"https://shop example/"'),
    ("empty", '""'),
    ("null", "null"),
    ("number", "42"),
    ("-1", '"-1"'),
    ("0", '"0"'),
    ("1e3", '"1e3"'),
    ("NaN literal", "NaN"),
    ("huge number", "1" + "0" * 40),
    ("list", '["https://a.b"]'),
    ("object", '{"href": "https://a.b"}'),
    ("nul", '"https://shop.example/\\u0000"'),
    ("lone surrogate", '"https://shop.example/\\ud800"'),
]
# (id, body, content type, status, code, field at fault)
BAD_TEST_BODIES_REFUSED_BY_THE_SCHEMA = body_cases(GOOD_TEST, "url") + [
    (f"url {label}", raw_body(GOOD_TEST, url=raw), JSON, 422, "VALIDATION_ERROR", "url")
    for label, raw in BAD_URLS
]
# Bodies the schema takes (no url: the brand's webhook URL is the default), refused by the service
# when the brand has none.
TEST_BODIES_WITHOUT_A_URL = [
    ("no body and no brand webhook URL", None, None, 422, "VALIDATION_ERROR", "url"),
    ("empty object and no brand webhook URL", "{}", JSON, 422, "VALIDATION_ERROR", "url"),
]
BAD_TEST_BODIES = BAD_TEST_BODIES_REFUSED_BY_THE_SCHEMA + TEST_BODIES_WITHOUT_A_URL
