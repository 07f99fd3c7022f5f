"""Bad input the other API test files leave out, over HTTP: outbound SMS and webhook test bodies,
list queries, ids in the path, body encodings.

Each bad value is tried where its rule lives (tests/api/test_query_schemas.py, test_path_guard.py,
test_body_rules.py, and the lookups below); here one test per endpoint proves the wiring.
"""

import json

import pytest

from gateway.accounts import api_keys
from gateway.accounts.models.api_key import ApiKey
from gateway.domain_errors import NotFound, ValidationFailed
from gateway.extensions import db
from gateway.payments import customers, lifecycle, refunds, transactions
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment, Refund, Transaction
from gateway.sms import outbound
from gateway.sms.models.outbound_sms import OutboundSms
from gateway.webhooks import deliveries
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.bad_input import (
    BAD_IDS_PAST_THE_GUARD,
    BAD_SMS_BODIES,
    BAD_TEST_BODIES,
    BY_ID,
    JSON,
    SMS_URL,
    assert_refused,
    routed_id,
    send,
)
from tests.factories import CustomerFactory, PaymentFactory, completed_payment


def count(model):
    """Rows of a table as committed."""
    db.session.expire_all()
    return db.session.scalar(db.select(db.func.count()).select_from(model))


# --- the bodies of POST /sms/outbound and POST /webhooks/tests --------------------------------

# One HTTP test per endpoint, with a body of each kind of refusal: tests/api/test_body_rules.py
# reads every bad body through the guard and the parser without HTTP; here they come out in the
# envelope (status, code, field at fault) and nothing is written.
BODY_ENDPOINTS = {  # url: (its table, its bad bodies, the ones sent here)
    SMS_URL: (
        OutboundSms,
        BAD_SMS_BODIES,
        ["invalid json", "json as text", "null", "body over 1 MB", "to short", "body nul"],
    ),
    "/api/v1/webhooks/tests": (
        WebhookDelivery,
        BAD_TEST_BODIES,
        [
            "invalid json",
            "json as text",
            "null",
            "body over 1 MB",
            "url ftp",
            "no body and no brand webhook URL",
        ],
    ),
}


@pytest.mark.parametrize("url", BODY_ENDPOINTS)
def test_bad_bodies_are_refused_in_the_envelope_and_write_nothing(client, auth, subtests, url):
    table, cases, sent = BODY_ENDPOINTS[url]
    cases = {case[0]: case[1:] for case in cases}

    for label in sent:
        with subtests.test(body=label):
            body, content_type, status, code, field = cases[label]
            response = send(client, "post", url, auth, body, content_type)

            assert_refused(response, status, code, field)
            assert count(table) == 0


def test_a_webhook_test_without_a_url_is_refused_naming_url_when_the_brand_has_none(brand):
    assert not brand.webhook_url

    with pytest.raises(ValidationFailed) as refused:
        deliveries.send_test_webhook(brand, None)

    assert [error["field"] for error in refused.value.errors] == ["url"]
    assert count(WebhookDelivery) == 0


# --- the list queries --------------------------------------------------------------------------

# One request per list with a bad page parameter and a bad filter: the endpoint reads its query
# through its schema (tests/api/test_query_schemas.py tries every bad value there) and answers in
# the envelope, naming both, before it reads or writes a row.
LISTS = {  # path: (table, a bad filter of its own)
    "/api/v1/payments": (Payment, "from=2030-02-30"),
    "/api/v1/transactions": (Transaction, "provider=" + "x" * 21),
    "/api/v1/refunds": (Refund, "trx_id=" + "x" * 21),
    "/api/v1/customers": (Customer, "phone=%2B880ABCDEFGHIJ"),
    "/api/v1/sms/outbound": (OutboundSms, "status=Queued"),
}


@pytest.fixture
def one_of_everything(brand):
    """A row in every listed table, so a bad query has something to get wrong."""
    from gateway.payments.refunds import create_refund
    from gateway.sms.outbound import queue_sms

    payment = completed_payment(brand=brand, customer=CustomerFactory(brand=brand))
    create_refund(brand, payment.transaction.trx_id, None)
    PaymentFactory(brand=brand)
    queue_sms(brand, "+8801712345678", "Hello")
    db.session.commit()


@pytest.mark.parametrize("path", LISTS)
def test_bad_list_queries_are_422_naming_the_parameter_and_write_nothing(
    client, auth, one_of_everything, path
):
    table, bad_filter = LISTS[path]
    before = count(table)

    response = client.get(f"{path}?per_page=101&{bad_filter}", headers=auth)

    assert_refused(response, 422, "VALIDATION_ERROR", "per_page")
    assert_refused(response, 422, "VALIDATION_ERROR", bad_filter.split("=")[0])
    assert count(table) == before


@pytest.mark.parametrize("path", LISTS)
def test_unknown_and_repeated_list_parameters_do_not_fail(client, auth, one_of_everything, path):
    response = client.get(f"{path}?page=1&page=2&per_page=5&bogus=%00&sort=-id", headers=auth)

    assert response.status_code == 200
    assert response.get_json()["meta"]["per_page"] == 5


# --- ids in the path ---------------------------------------------------------------------------


@pytest.fixture
def admin(brand, make_key):
    """Headers that pass every check of every route, /api-keys included."""
    from tests.factories import UserFactory

    UserFactory(brand=brand, role="super_admin", email="root@example.com")
    return {
        **make_key(brand, ["read", "write", "admin"]),
        "X-Super-Admin-Email": "root@example.com",
    }


# The lookup each by-id route hands its id to once the path guard has let it through (the guard
# itself: tests/api/test_path_guard.py); PATCH and DELETE /customers/{id} look up as GET does.
LOOKUPS = [  # (method, path, the lookup its view calls with the brand and the id)
    ("get", "/api/v1/payments/{id}", lambda brand, id: lifecycle.get_payment_view(brand.id, id)),
    ("post", "/api/v1/payments/{id}/cancel", lifecycle.get_payment),
    ("get", "/api/v1/transactions/{id}", transactions.get_transaction),
    ("get", "/api/v1/refunds/{id}", refunds.get_refund),
    ("get", "/api/v1/customers/{id}", customers.get_customer),
    ("delete", "/api/v1/api-keys/{id}", lambda brand, id: api_keys.revoke_key(brand, key_id=id)),
    ("get", "/api/v1/webhooks/deliveries/{id}", deliveries.get_delivery),
    ("post", "/api/v1/webhooks/deliveries/{id}/retry", deliveries.retry_delivery),
    ("post", "/api/v1/sms/outbound/{id}/retry", outbound.retry_outbound_sms),
]
NOT_FOUND_CODES = {(method, path): code for method, path, code in BY_ID}
TABLES = (Payment, Transaction, Refund, Customer, ApiKey, WebhookDelivery, OutboundSms)


# Each lookup tries every id in one test, an id a subtest: the rows are built once per lookup.
@pytest.mark.parametrize("method, path, find", LOOKUPS, ids=[f"{m} {p}" for m, p, _ in LOOKUPS])
def test_a_lookup_answers_every_id_no_row_has_with_the_resources_not_found_and_changes_nothing(
    app, brand, make_key, one_of_everything, subtests, method, path, find
):
    make_key(brand)  # a key for the revocation to get wrong
    before = [count(table) for table in TABLES]

    for ident in BAD_IDS_PAST_THE_GUARD:
        with subtests.test(id=ident[:24]):
            with pytest.raises(NotFound) as refused:
                find(brand, routed_id(app, method, path, ident))

            assert refused.value.code == NOT_FOUND_CODES[method, path]
            assert [count(table) for table in TABLES] == before


# One request per route, with an id the path guard refuses and one its lookup does not find.
@pytest.mark.parametrize("method, path, code", BY_ID, ids=[f"{m} {p}" for m, p, _ in BY_ID])
def test_an_id_no_row_has_is_the_resources_own_404_and_changes_nothing(
    client, admin, one_of_everything, subtests, method, path, code
):
    before = [count(table) for table in TABLES]

    for ident in ("1%00", "99999999999999999999"):
        with subtests.test(id=ident):
            response = getattr(client, method)(
                path.format(id=ident),
                headers=admin,
                **({"json": {"name": "x"}} if method == "patch" else {}),
            )

            assert_refused(response, 404, code)
            assert [count(table) for table in TABLES] == before


# --- how a body is encoded ---------------------------------------------------------------------

PAYMENT = {"amount": "500.00", "currency": "BDT", "customer_name": "রহিম উদ্দিন"}


@pytest.mark.parametrize(
    "encoding, content_type",
    [
        ("utf-16", "application/json; charset=utf-16"),
        ("utf-16-le", "application/json; charset=UTF-16LE"),
        ("utf-16", "application/json"),
        ("utf-32", "application/json; charset=utf-32"),
        ("utf-8-sig", "application/json; charset=utf-8"),
        ("cp1252", "application/json; charset=windows-1252"),
    ],
)
def test_a_body_not_in_utf8_is_400_invalid_json_not_415_whatever_charset_it_declares(
    client, auth, encoding, content_type
):
    body = json.dumps({**PAYMENT, "customer_name": "Café"}, ensure_ascii=False).encode(encoding)

    response = client.post("/api/v1/payments", data=body, content_type=content_type, headers=auth)

    assert_refused(response, 400, "INVALID_JSON")
    assert count(Payment) == 0


@pytest.mark.parametrize("charset", ["utf-16", "iso-8859-1", "UTF-8", "bogus"])
def test_a_utf8_body_is_taken_whatever_charset_it_declares_as_rfc_8259_says(client, auth, charset):
    body = json.dumps(PAYMENT, ensure_ascii=False).encode("utf-8")

    response = client.post(
        "/api/v1/payments",
        data=body,
        content_type=f"application/json; charset={charset}",
        headers=auth,
    )

    assert response.status_code == 201, response.get_json()
    payment = db.session.execute(db.select(Payment)).scalar_one()
    assert payment.customer_name == "রহিম উদ্দিন"


def test_json_null_is_a_422_on_the_body_not_invalid_json(client, auth):
    response = client.post("/api/v1/payments", data="null", content_type=JSON, headers=auth)

    assert_refused(response, 422, "VALIDATION_ERROR", "body")
    assert count(Payment) == 0
