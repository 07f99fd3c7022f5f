"""POST/GET /refunds and the refund rules: full, partial, the remainder, never more than paid."""

from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Refund, Transaction
from gateway.payments.refunds import create_refund
from tests.factories import completed_payment

JSON = "application/json"
# Raw bodies, "@TRX@" standing for a real trx_id: (id, body, content type, status, code, field at
# fault).
BAD_BODIES = (
    [
        ("no body", None, None, 422, "VALIDATION_ERROR", "trx_id"),
        ("empty object", "{}", JSON, 422, "VALIDATION_ERROR", "trx_id"),
        ("invalid json", '{"trx_id": "@TRX@", ', JSON, 400, "INVALID_JSON", None),
        (
            "form encoded",
            "trx_id=@TRX@&amount=1.00",
            "application/x-www-form-urlencoded",
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        ("json as text", '{"trx_id": "@TRX@"}', "text/plain", 415, "UNSUPPORTED_MEDIA_TYPE", None),
        ("array", '["@TRX@"]', JSON, 422, "VALIDATION_ERROR", "body"),
        ("string", '"@TRX@"', JSON, 422, "VALIDATION_ERROR", "body"),
        ("trx_id number", '{"trx_id": 12345}', JSON, 422, "VALIDATION_ERROR", "trx_id"),
        ("trx_id null", '{"trx_id": null}', JSON, 422, "VALIDATION_ERROR", "trx_id"),
        ("trx_id empty", '{"trx_id": ""}', JSON, 422, "VALIDATION_ERROR", "trx_id"),
        (
            "trx_id huge",
            '{"trx_id": "' + "T" * 100_000 + '"}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "trx_id",
        ),
        ("trx_id object", '{"trx_id": {"$ne": null}}', JSON, 422, "VALIDATION_ERROR", "trx_id"),
        (
            "transaction_id string",
            '{"transaction_id": "1"}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "transaction_id",
        ),
        (
            "transaction_id float",
            '{"transaction_id": 1.5}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "transaction_id",
        ),
        (
            "transaction_id bool",
            '{"transaction_id": true}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "transaction_id",
        ),
        (
            "transaction_id zero",
            '{"transaction_id": 0}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "transaction_id",
        ),
        (
            "transaction_id huge",
            '{"transaction_id": 1' + "0" * 40 + "}",
            JSON,
            422,
            "VALIDATION_ERROR",
            "transaction_id",
        ),
        (
            "both references",
            '{"trx_id": "@TRX@", "transaction_id": 1}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "transaction_id",
        ),
    ]
    + [
        (
            f"amount {label}",
            '{"trx_id": "@TRX@", "amount": ' + raw + "}",
            JSON,
            422,
            "VALIDATION_ERROR",
            "amount",
        )
        for label, raw in [
            ("-1", '"-1"'),
            ("0", '"0"'),
            ("0.00", '"0.00"'),
            ("-0.01 number", "-0.01"),
            ("1.001", '"1.001"'),
            ("1e3", '"1e3"'),
            ("NaN string", '"NaN"'),
            ("NaN literal", "NaN"),
            ("Infinity", '"Infinity"'),
            ("1e400", "1e400"),
            ("huge string", '"' + "9" * 30 + '"'),
            ("huge number", "1" + "0" * 30),
            ("empty", '""'),
            ("blank", '" "'),
            ("comma", '"1,00"'),
            ("words", '"ten"'),
            ("bool", "true"),
            ("array", '["1.00"]'),
            ("object", '{"value": "1.00"}'),
            ("plus sign", '"+1.00"'),
            ("hex", '"0x10"'),
        ]
    ]
    + [
        (
            "amount over the paid amount",
            '{"trx_id": "@TRX@", "amount": "500.01"}',
            JSON,
            422,
            "REFUND_EXCEEDS_REMAINING",
            "amount",
        ),
        (
            "reason too long",
            '{"trx_id": "@TRX@", "reason": "' + "r" * 501 + '"}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "reason",
        ),
        (
            "reason number",
            '{"trx_id": "@TRX@", "reason": 42}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "reason",
        ),
        (
            "reason object",
            '{"trx_id": "@TRX@", "reason": {"a": 1}}',
            JSON,
            422,
            "VALIDATION_ERROR",
            "reason",
        ),
        (
            "body over 1 MB",
            '{"trx_id": "@TRX@", "reason": "' + "r" * (1024 * 1024 + 1) + '"}',
            JSON,
            413,
            "PAYLOAD_TOO_LARGE",
            None,
        ),
    ]
)


def post_refund(client, auth, body, **kwargs):
    return client.post("/api/v1/refunds", json=body, headers=auth, **kwargs)


def amounts_of(payment):
    """(payment status, payment refunded, transaction status, transaction refunded) as committed."""
    db.session.expire_all()
    payment = db.session.get(Payment, payment.id)
    return (
        payment.status,
        payment.amount_refunded,
        payment.transaction.status,
        payment.transaction.amount_refunded,
    )


def refund_count():
    return db.session.execute(db.select(db.func.count()).select_from(Refund)).scalar_one()


def test_full_refund_returns_201_with_the_refund_record(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    trx = payment.transaction
    with freeze_time("2024-05-10 12:00:00"):
        response = post_refund(
            client, auth, {"trx_id": trx.trx_id, "amount": "500.00", "reason": "Out of stock"}
        )
    assert response.status_code == 201
    body = response.get_json()
    assert body["success"] is True
    refund = db.session.execute(db.select(Refund)).scalar_one()
    assert body["data"] == {
        "id": refund.id,
        "trx_id": trx.trx_id,
        "transaction_id": trx.id,
        "amount": "500.00",
        "currency": "BDT",
        "reason": "Out of stock",
        "status": "completed",
        "created_at": "2024-05-10T12:00:00+00:00",
        "livemode": True,
    }
    assert amounts_of(payment) == ("refunded", Decimal("500.00"), "refunded", Decimal("500.00"))


def test_partial_refunds_move_payment_to_partially_refunded_then_refunded(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    trx_id = payment.transaction.trx_id

    first = post_refund(client, auth, {"trx_id": trx_id, "amount": "120.5"})
    assert first.status_code == 201
    assert first.get_json()["data"]["amount"] == "120.50"
    assert amounts_of(payment) == (
        "partially_refunded",
        Decimal("120.50"),
        "partially_refunded",
        Decimal("120.50"),
    )
    # The guarded UPDATE adds minor units in SQL: the stored integers must be cents, not 120.5.
    raw = db.session.execute(
        db.text(
            "SELECT t.amount_refunded, p.amount_refunded FROM transactions t "
            "JOIN payments p ON p.id = t.payment_id"
        )
    ).one()
    assert tuple(raw) == (12050, 12050)

    second = post_refund(client, auth, {"trx_id": trx_id, "amount": 379.5})
    assert second.status_code == 201
    assert second.get_json()["data"]["amount"] == "379.50"
    assert amounts_of(payment) == ("refunded", Decimal("500.00"), "refunded", Decimal("500.00"))
    read = client.get(f"/api/v1/payments/{payment.public_id}", headers=auth).get_json()["data"]
    assert (read["status"], read["amount_refunded"]) == ("refunded", "500.00")


def test_refund_without_amount_refunds_the_remainder(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    trx_id = payment.transaction.trx_id
    assert post_refund(client, auth, {"trx_id": trx_id, "amount": "100.00"}).status_code == 201

    response = post_refund(client, auth, {"trx_id": trx_id, "amount": None})

    assert response.status_code == 201
    assert response.get_json()["data"]["amount"] == "400.00"
    assert amounts_of(payment) == ("refunded", Decimal("500.00"), "refunded", Decimal("500.00"))


def test_a_refund_with_unknown_properties_ignores_them_as_its_document_says(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("80.00"))
    body = {"trx_id": payment.transaction.trx_id, "amount": "30.00", "note": "x\x00", "n": [{}]}

    response = post_refund(client, auth, body)
    document = client.get("/api/v1/openapi.json").get_json()

    assert response.status_code == 201
    assert set(response.get_json()["data"]) == {
        "id",
        "trx_id",
        "transaction_id",
        "amount",
        "currency",
        "reason",
        "status",
        "created_at",
        "livemode",
    }
    assert amounts_of(payment)[1] == Decimal("30.00")
    refund = document["components"]["schemas"]["RefundCreate"]
    assert refund["additionalProperties"] is True
    assert "Unknown properties are ignored." in refund["description"]


def test_refund_by_integer_transaction_id(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("80.00"))

    response = post_refund(
        client, auth, {"transaction_id": payment.transaction.id, "amount": "30.00"}
    )

    assert response.status_code == 201
    assert response.get_json()["data"]["trx_id"] == payment.transaction.trx_id
    assert amounts_of(payment)[1] == Decimal("30.00")


def test_refund_cannot_exceed_remaining_amount(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    trx_id = payment.transaction.trx_id
    assert post_refund(client, auth, {"trx_id": trx_id, "amount": "499.99"}).status_code == 201

    response = post_refund(client, auth, {"trx_id": trx_id, "amount": "0.02"})

    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "REFUND_EXCEEDS_REMAINING"
    assert "0.01 BDT" in body["message"]
    assert body["errors"][0]["field"] == "amount"
    assert refund_count() == 1
    assert amounts_of(payment) == (
        "partially_refunded",
        Decimal("499.99"),
        "partially_refunded",
        Decimal("499.99"),
    )


@pytest.mark.parametrize("amount", ["1.00", None])
def test_fully_refunded_transaction_has_nothing_left_to_refund(client, auth, brand, amount):
    payment = completed_payment(brand=brand, amount=Decimal("10.00"))
    assert post_refund(client, auth, {"trx_id": payment.transaction.trx_id}).status_code == 201

    response = post_refund(client, auth, {"trx_id": payment.transaction.trx_id, "amount": amount})

    assert response.status_code == 422
    assert response.get_json()["code"] == "REFUND_EXCEEDS_REMAINING"
    assert refund_count() == 1


@pytest.mark.parametrize("status", ["created", "processing", "cancelled", "expired", "failed"])
def test_refund_on_a_payment_that_is_not_completed_is_invalid_state(client, auth, brand, status):
    payment = completed_payment(brand=brand)
    # No service takes a paid payment back; force the row to show the rule holds on the payment too.
    db.session.execute(db.update(Payment).where(Payment.id == payment.id).values(status=status))
    db.session.commit()

    response = post_refund(client, auth, {"trx_id": payment.transaction.trx_id, "amount": "1.00"})

    assert response.status_code == 409
    assert response.get_json()["code"] == "INVALID_STATE"
    assert refund_count() == 0
    assert amounts_of(payment) == (status, Decimal("0.00"), "completed", Decimal("0.00"))


@pytest.mark.parametrize("body", [{"trx_id": "TRXAAAAAAAAAAAA"}, {"transaction_id": 999999}])
def test_unknown_transaction_is_404(client, auth, brand, body):
    response = post_refund(client, auth, body)

    assert response.status_code == 404
    assert response.get_json()["code"] == "TRANSACTION_NOT_FOUND"


def test_another_brands_transaction_and_refund_read_as_404(client, auth, brand, other_brand):
    theirs = completed_payment(brand=other_brand, amount=Decimal("50.00"))
    their_refund = create_refund(other_brand, theirs.transaction.trx_id, Decimal("5.00"))

    by_trx = post_refund(client, auth, {"trx_id": theirs.transaction.trx_id, "amount": "1.00"})
    by_id = post_refund(client, auth, {"transaction_id": theirs.transaction.id, "amount": "1.00"})
    read = client.get(f"/api/v1/refunds/{their_refund.id}", headers=auth)
    listed = client.get("/api/v1/refunds", headers=auth)

    assert [r.status_code for r in (by_trx, by_id, read)] == [404, 404, 404]
    assert [r.get_json()["code"] for r in (by_trx, by_id, read)] == [
        "TRANSACTION_NOT_FOUND"
    ] * 2 + ["REFUND_NOT_FOUND"]
    assert listed.get_json()["data"] == []
    assert amounts_of(theirs)[1] == Decimal("5.00")


def test_read_only_key_cannot_refund_but_can_list(client, brand, make_key):
    payment = completed_payment(brand=brand)
    read_only = make_key(brand, ["read"])

    refused = post_refund(client, read_only, {"trx_id": payment.transaction.trx_id})

    assert refused.status_code == 403
    assert refused.get_json()["code"] == "INSUFFICIENT_SCOPE"
    assert refund_count() == 0
    assert client.get("/api/v1/refunds", headers=read_only).status_code == 200


def test_write_only_key_cannot_list_refunds(client, brand, make_key):
    response = client.get("/api/v1/refunds", headers=make_key(brand, ["write"]))

    assert response.status_code == 403
    assert response.get_json()["code"] == "INSUFFICIENT_SCOPE"


def test_repeated_idempotency_key_refunds_once(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("100.00"))
    headers = {**auth, "Idempotency-Key": "refund-order-1"}
    body = {"trx_id": payment.transaction.trx_id, "amount": "40.00"}

    first = post_refund(client, headers, body)
    second = post_refund(client, headers, body)

    assert (first.status_code, second.status_code) == (201, 201)
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.get_json() == first.get_json()
    assert refund_count() == 1
    assert amounts_of(payment)[1] == Decimal("40.00")


def test_list_refunds_newest_first_with_filters_and_paging(client, auth, brand):
    one = completed_payment(brand=brand, amount=Decimal("100.00"))
    two = completed_payment(brand=brand, amount=Decimal("100.00"))
    for moment, payment, amount in [
        ("2024-05-01 10:00", one, "10.00"),
        ("2024-05-02 10:00", two, "20.00"),
        ("2024-05-03 10:00", one, "30.00"),
    ]:
        with freeze_time(moment):
            create_refund(brand, payment.transaction.trx_id, Decimal(amount))

    everything = client.get("/api/v1/refunds?per_page=2", headers=auth).get_json()
    of_one = client.get(f"/api/v1/refunds?trx_id={one.transaction.trx_id}", headers=auth).get_json()
    window = client.get(
        "/api/v1/refunds?from=2024-05-02T00:00:00Z&to=2024-05-02T23:59:59Z", headers=auth
    ).get_json()

    assert [r["amount"] for r in everything["data"]] == ["30.00", "20.00"]
    assert everything["meta"] == {"page": 1, "per_page": 2, "total": 3, "total_pages": 2}
    assert [r["amount"] for r in of_one["data"]] == ["30.00", "10.00"]
    assert [r["trx_id"] for r in window["data"]] == [two.transaction.trx_id]


def test_read_one_refund(client, auth, brand):
    payment = completed_payment(brand=brand)
    refund = create_refund(brand, payment.transaction.trx_id, Decimal("12.00"), "damaged")

    response = client.get(f"/api/v1/refunds/{refund.id}", headers=auth)

    assert response.status_code == 200
    data = response.get_json()["data"]
    assert (data["id"], data["amount"], data["reason"], data["status"]) == (
        refund.id,
        "12.00",
        "damaged",
        "completed",
    )


@pytest.mark.parametrize("refund_id", ["0", "abc", "99999999999999999999999", "-1"])
def test_unknown_refund_id_is_404(client, auth, brand, refund_id):
    response = client.get(f"/api/v1/refunds/{refund_id}", headers=auth)

    assert response.status_code == 404
    assert response.get_json()["code"] == "REFUND_NOT_FOUND"


@pytest.mark.parametrize(
    "query, field",
    [("trx_id=" + "X" * 300, "trx_id"), ("from=yesterday", "from"), ("per_page=101", "per_page")],
)
def test_bad_refund_list_filters_are_422(client, auth, brand, query, field):
    response = client.get(f"/api/v1/refunds?{query}", headers=auth)

    assert response.status_code == 422
    assert [error["field"] for error in response.get_json()["errors"]] == [field]


def test_service_refunds_without_http_and_rejects_non_positive_amounts(brand):
    payment = completed_payment(brand=brand, amount=Decimal("60.00"))

    refund = create_refund(brand, payment.transaction.id, Decimal("15.00"), reason="")
    with pytest.raises(DomainError) as refused:
        create_refund(brand, payment.transaction.trx_id, Decimal("0.00"))

    assert (refund.amount, refund.reason, refund.transaction.trx_id) == (
        Decimal("15.00"),
        None,
        payment.transaction.trx_id,
    )
    assert (http_status(refused.value), refused.value.errors[0]["field"]) == (422, "amount")
    transaction = db.session.get(Transaction, payment.transaction.id)
    assert (transaction.status, transaction.amount_refunded) == (
        "partially_refunded",
        Decimal("15.00"),
    )


@pytest.mark.parametrize(
    "body, content_type, status, code, field",
    [case[1:] for case in BAD_BODIES],
    ids=[case[0] for case in BAD_BODIES],
)
def test_bad_refund_body_is_a_4xx_naming_the_field_and_writes_nothing(
    client, auth, brand, body, content_type, status, code, field
):
    payment = completed_payment(brand=brand, amount=Decimal("500.00"))
    kwargs = {} if body is None else {"data": body.replace("@TRX@", payment.transaction.trx_id)}
    if content_type:
        kwargs["content_type"] = content_type

    response = client.post("/api/v1/refunds", headers=auth, **kwargs)

    assert response.status_code == status
    body = response.get_json()
    assert (body["success"], body["error"], body["code"]) == (False, True, code)
    if field:
        assert field in [error["field"] for error in body["errors"]]
    assert refund_count() == 0
    assert amounts_of(payment) == ("completed", Decimal("0.00"), "completed", Decimal("0.00"))
