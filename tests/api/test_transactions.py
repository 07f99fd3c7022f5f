"""GET /transactions and /transactions/{trx_id}: completed payments' records, per brand."""

from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.refunds import create_refund
from gateway.payments.transactions import get_transaction, list_transactions_query
from tests.factories import PaymentFactory, completed_payment


def completed_at(moment, brand, **kwargs):
    """A payment completed at a frozen moment (its transaction's created_at)."""
    with freeze_time(moment):
        return completed_payment(brand=brand, **kwargs)


def test_read_transaction_returns_every_field(client, auth, brand):
    payment = completed_at("2024-05-10 08:30:00", brand, amount=Decimal("750.00"), currency="USD")
    trx = payment.transaction

    response = client.get(f"/api/v1/transactions/{trx.trx_id}", headers=auth)

    assert response.status_code == 200
    assert response.get_json() == {
        "success": True,
        "data": {
            "id": trx.id,
            "trx_id": trx.trx_id,
            "payment_id": payment.public_id,
            "amount": "750.00",
            "amount_refunded": "0.00",
            "fee": "0.00",
            "currency": "USD",
            "status": "completed",
            "provider": "bkash",
            "provider_trx_id": trx.provider_trx_id,
            "created_at": "2024-05-10T08:30:00+00:00",
            "livemode": True,
        },
    }


def test_transaction_shows_refunds_and_accepts_lower_case_trx_id(client, auth, brand):
    payment = completed_payment(brand=brand, amount=Decimal("100.00"))
    create_refund(brand, payment.transaction.trx_id, Decimal("25.50"))

    data = client.get(
        f"/api/v1/transactions/{payment.transaction.trx_id.lower()}", headers=auth
    ).get_json()["data"]

    assert (data["status"], data["amount_refunded"]) == ("partially_refunded", "25.50")


@pytest.mark.parametrize("trx_id", ["TRXAAAAAAAAAAAA", "x" * 300, "1"])
def test_unknown_trx_id_is_404(client, auth, brand, trx_id):
    response = client.get(f"/api/v1/transactions/{trx_id}", headers=auth)

    assert response.status_code == 404
    assert response.get_json()["code"] == "TRANSACTION_NOT_FOUND"


def test_another_brands_transaction_is_404_and_not_listed(client, auth, brand, other_brand):
    theirs = completed_payment(brand=other_brand)

    read = client.get(f"/api/v1/transactions/{theirs.transaction.trx_id}", headers=auth)
    listed = client.get("/api/v1/transactions", headers=auth).get_json()

    assert (read.status_code, read.get_json()["code"]) == (404, "TRANSACTION_NOT_FOUND")
    assert (listed["data"], listed["meta"]["total"]) == ([], 0)


def test_list_is_newest_first_and_leaves_out_unpaid_payments(client, auth, brand):
    old = completed_at("2024-05-01 10:00:00", brand)
    new = completed_at("2024-05-03 10:00:00", brand)
    PaymentFactory(brand=brand, status="created")
    PaymentFactory(brand=brand, status="cancelled")

    body = client.get("/api/v1/transactions", headers=auth).get_json()

    assert [t["trx_id"] for t in body["data"]] == [new.transaction.trx_id, old.transaction.trx_id]
    assert body["meta"] == {"page": 1, "per_page": 25, "total": 2, "total_pages": 1}


def test_list_filters_by_status_provider_and_dates(client, auth, brand):
    first = completed_at("2024-05-01 10:00:00", brand, amount=Decimal("10.00"))
    second = completed_at("2024-05-02 10:00:00", brand, amount=Decimal("20.00"))
    third = completed_at("2024-05-03 10:00:00", brand, amount=Decimal("30.00"))
    create_refund(brand, second.transaction.trx_id, Decimal("5.00"))
    third.transaction.provider = "nagad"
    db.session.commit()

    def trx_ids(query):
        return [
            t["trx_id"]
            for t in client.get(f"/api/v1/transactions?{query}", headers=auth).get_json()["data"]
        ]

    assert trx_ids("status=partially_refunded") == [second.transaction.trx_id]
    assert trx_ids("provider=nagad") == [third.transaction.trx_id]
    assert trx_ids("provider=bKash") == [second.transaction.trx_id, first.transaction.trx_id]
    assert trx_ids("from=2024-05-02T00:00:00Z") == [
        third.transaction.trx_id,
        second.transaction.trx_id,
    ]
    assert trx_ids("to=2024-05-02T10:00:00%2B00:00") == [
        second.transaction.trx_id,
        first.transaction.trx_id,
    ]
    assert trx_ids("from=2024-05-02T15:00:00%2B06:00&to=2024-05-02T16:00:00%2B06:00") == [
        second.transaction.trx_id
    ]


@pytest.mark.parametrize(
    "query, field",
    [
        ("status=created", "status"),
        ("status=bogus", "status"),
        ("from=not-a-date", "from"),
        ("to=2024-13-01", "to"),
        ("provider=" + "p" * 50, "provider"),
        ("page=0", "page"),
    ],
)
def test_bad_list_filters_are_422_naming_the_field(client, auth, brand, query, field):
    response = client.get(f"/api/v1/transactions?{query}", headers=auth)

    assert response.status_code == 422
    assert response.get_json()["code"] == "VALIDATION_ERROR"
    assert [error["field"] for error in response.get_json()["errors"]] == [field]


def test_transactions_need_the_read_scope(client, brand, make_key):
    response = client.get("/api/v1/transactions", headers=make_key(brand, ["write"]))

    assert (response.status_code, response.get_json()["code"]) == (403, "INSUFFICIENT_SCOPE")


def test_services_list_and_read_without_http(brand, other_brand):
    mine = completed_at("2024-05-01 10:00:00", brand)
    completed_payment(brand=other_brand)

    listed = (
        db.session.execute(list_transactions_query(brand, {"status": "completed"})).scalars().all()
    )

    assert [t.id for t in listed] == [mine.transaction.id]
    assert get_transaction(brand, mine.transaction.trx_id).payment_id == mine.id
    with pytest.raises(DomainError) as missing:
        get_transaction(other_brand, mine.transaction.trx_id)
    assert (http_status(missing.value), missing.value.code) == (404, "TRANSACTION_NOT_FOUND")
