"""POST /api/v1/test/payments/{payment_id}/simulate: each outcome through the real SMS, matching
and webhook path, to a real receiver that checks every signature (docs/testing-your-integration.md).
"""

from decimal import Decimal

import pytest

from gateway.extensions import db
from gateway.payments.models.payment import Payment
from gateway.sms.models.inbound_sms import InboundSms
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.testmode.conftest import create_payment, simulate
from tests.webhook_support import drain_queues, receiver, rq_redis  # noqa: F401 - fixtures


def stored_texts():
    db.session.expire_all()
    return db.session.execute(db.select(InboundSms).order_by(InboundSms.id)).scalars().all()


def the_payment(payment_id):
    db.session.expire_all()
    return db.session.execute(
        db.select(Payment).where(Payment.public_id == payment_id)
    ).scalar_one()


def test_paid_completes_the_test_payment_and_its_signed_webhook_arrives(
    client,
    test_auth,
    receiver,  # noqa: F811
    rq_redis,  # noqa: F811
):
    created = create_payment(client, test_auth, callback_url=receiver.url)

    answer = simulate(client, test_auth, created["payment_id"], "paid")

    assert answer.status_code == 200, answer.json
    paid = answer.json["data"]
    assert paid["status"] == "completed" and paid["trx_id"].startswith("TRX")
    assert paid["provider"] == "bkash" and paid["livemode"] is False
    # The provider's text went through ingestion, stored as a test text bound to the payment.
    [sms] = stored_texts()
    assert (sms.livemode, sms.status, sms.sender) == (False, "matched", "bKash")
    assert sms.payment.public_id == created["payment_id"]
    assert sms.provider_trx_id == paid["provider_trx_id"] and sms.amount == Decimal("500.00")
    assert paid["provider_trx_id"] in sms.body and "You have received" in sms.body
    drain_queues()
    assert receiver.wait_for(1)
    [hit] = receiver.received
    assert hit["json"]["event"] == "payment.completed"
    assert hit["json"]["data"]["payment_id"] == created["payment_id"]
    assert hit["json"]["data"]["trx_id"] == paid["trx_id"]
    assert hit["headers"]["X-Service-Event"] == "payment.completed"
    # Read back with the test key, as a shop's server does before fulfilling.
    again = client.get(f"/api/v1/payments/{created['payment_id']}", headers=test_auth)
    assert again.json["data"]["status"] == "completed"


def test_mismatch_holds_the_test_payment_for_review_and_sends_no_completion(
    client,
    test_auth,
    receiver,  # noqa: F811
    rq_redis,  # noqa: F811
):
    created = create_payment(client, test_auth, callback_url=receiver.url)

    answer = simulate(client, test_auth, created["payment_id"], "mismatch")

    assert answer.status_code == 200, answer.json
    held = answer.json["data"]
    assert held["status"] == "processing"
    assert "SMS amount 499.00 differs from 500.00" in held["review_reason"]
    [sms] = stored_texts()
    assert (sms.livemode, sms.status, sms.amount) == (False, "review", Decimal("499.00"))
    drain_queues()
    assert db.session.execute(db.select(WebhookDelivery)).scalars().all() == []
    assert receiver.received == []
    # Held for review, it cannot be simulated into another outcome: the merchant decides.
    for outcome in ("paid", "mismatch", "expired"):
        refused = simulate(client, test_auth, created["payment_id"], outcome)
        assert refused.status_code == 409, outcome
        assert refused.json["code"] == "INVALID_STATE"


def test_expired_expires_the_test_payment_with_its_signed_webhook(
    client,
    test_auth,
    receiver,  # noqa: F811
    rq_redis,  # noqa: F811
):
    created = create_payment(client, test_auth, callback_url=receiver.url)

    answer = simulate(client, test_auth, created["payment_id"], "expired")

    assert answer.status_code == 200, answer.json
    assert answer.json["data"]["status"] == "expired"
    assert stored_texts() == []
    payment = the_payment(created["payment_id"])
    assert payment.expires_at <= payment.updated_at
    drain_queues()
    assert receiver.wait_for(1)
    [hit] = receiver.received
    assert hit["json"]["event"] == "payment.expired"
    assert hit["json"]["data"]["payment_id"] == created["payment_id"]
    assert hit["json"]["data"]["status"] == "expired"


def test_a_rocket_shop_s_test_payment_is_paid_with_a_rocket_text(client, brand, test_auth):
    from tests.factories import PaymentMethodFactory

    PaymentMethodFactory(brand=brand, provider="rocket", number="01812345678")
    created = create_payment(client, test_auth)

    answer = simulate(client, test_auth, created["payment_id"], "paid")

    assert answer.status_code == 200 and answer.json["data"]["status"] == "completed"
    [sms] = stored_texts()
    assert sms.provider == "rocket" and sms.sender == "16216" and sms.livemode is False


def test_simulated_texts_continue_the_test_simulator_s_balance_chain(client, brand, test_auth):
    brand.sms_chain_mode = "strict"
    db.session.commit()
    for reference in ("TEST-1", "TEST-2", "TEST-3"):
        created = create_payment(client, test_auth, reference=reference)
        answer = simulate(client, test_auth, created["payment_id"], "paid")
        assert answer.json["data"]["status"] == "completed", answer.json
    balances = [sms.balance for sms in stored_texts()]
    assert balances == [Decimal("1500.00"), Decimal("2000.00"), Decimal("2500.00")]


def test_a_live_key_cannot_simulate_even_its_own_payment(client, live_auth):
    created = create_payment(client, live_auth)

    refused = simulate(client, live_auth, created["payment_id"], "paid")

    assert refused.status_code == 403
    assert refused.json["success"] is False
    assert refused.json["code"] == "TEST_MODE_ONLY"
    assert "test key" in refused.json["message"]
    assert the_payment(created["payment_id"]).status == "created"
    assert stored_texts() == []


def test_a_test_key_cannot_reach_a_live_payment(client, live_auth, test_auth):
    created = create_payment(client, live_auth)

    refused = simulate(client, test_auth, created["payment_id"], "paid")

    assert refused.status_code == 404
    assert refused.json["code"] == "PAYMENT_NOT_FOUND"
    assert the_payment(created["payment_id"]).status == "created"
    assert stored_texts() == []


def test_another_brand_s_test_payment_is_not_found(client, other_brand, test_auth):
    from gateway.accounts.api_keys import generate_key

    _, secret = generate_key(other_brand, "theirs", ["read", "write"], livemode=False)
    theirs = create_payment(client, {"Authorization": f"Bearer {secret}"})

    refused = simulate(client, test_auth, theirs["payment_id"], "paid")

    assert refused.status_code == 404
    assert the_payment(theirs["payment_id"]).status == "created"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"outcome": "refunded"},
        {"outcome": ""},
        {"outcome": None},
        {"outcome": 1},
        {"outcome": ["paid"]},
        {"outcome": "PAID"},
        {"outcome": "paid\x00"},
    ],
    ids=["missing", "unknown", "empty", "null", "number", "list", "upper-case", "nul"],
)
def test_a_bad_outcome_is_refused_on_its_field_and_changes_nothing(client, test_auth, body):
    created = create_payment(client, test_auth)

    refused = client.post(
        f"/api/v1/test/payments/{created['payment_id']}/simulate", json=body, headers=test_auth
    )

    assert refused.status_code == 422, refused.json
    assert refused.json["success"] is False
    assert [error["field"] for error in refused.json["errors"]] == ["outcome"]
    assert the_payment(created["payment_id"]).status == "created"
    assert stored_texts() == []


@pytest.mark.parametrize("payment_id", ["nope", "0" * 36, "x" * 300])
def test_an_unknown_payment_id_is_not_found(client, test_auth, payment_id):
    refused = simulate(client, test_auth, payment_id, "paid")

    assert refused.status_code == 404
    assert refused.json["success"] is False


def test_a_body_that_is_not_json_is_refused(client, test_auth):
    created = create_payment(client, test_auth)

    refused = client.post(
        f"/api/v1/test/payments/{created['payment_id']}/simulate",
        data="outcome=paid",
        headers={**test_auth, "Content-Type": "application/x-www-form-urlencoded"},
    )

    assert refused.status_code in (400, 415, 422)
    assert refused.json["success"] is False
    assert the_payment(created["payment_id"]).status == "created"


def test_without_a_key_nothing_is_simulated(client, test_auth):
    created = create_payment(client, test_auth)

    refused = client.post(
        f"/api/v1/test/payments/{created['payment_id']}/simulate", json={"outcome": "paid"}
    )

    assert refused.status_code == 401
    assert the_payment(created["payment_id"]).status == "created"


@pytest.mark.parametrize("outcome", ["paid", "mismatch", "expired"])
def test_a_finished_payment_cannot_be_simulated_again(client, test_auth, outcome):
    created = create_payment(client, test_auth)
    assert simulate(client, test_auth, created["payment_id"], "paid").status_code == 200

    refused = simulate(client, test_auth, created["payment_id"], outcome)

    assert refused.status_code == 409
    assert refused.json["code"] == "INVALID_STATE"
    assert len(stored_texts()) == 1


def test_a_cancelled_payment_cannot_be_simulated(client, test_auth):
    created = create_payment(client, test_auth)
    cancelled = client.post(f"/api/v1/payments/{created['payment_id']}/cancel", headers=test_auth)
    assert cancelled.status_code == 200

    for outcome in ("paid", "mismatch", "expired"):
        refused = simulate(client, test_auth, created["payment_id"], outcome)
        assert refused.status_code == 409, outcome
    assert stored_texts() == []


def test_a_read_only_test_key_cannot_simulate(client, brand, test_auth):
    from gateway.accounts.api_keys import generate_key

    created = create_payment(client, test_auth)
    _, secret = generate_key(brand, "reader", ["read"], livemode=False)

    refused = simulate(client, {"Authorization": f"Bearer {secret}"}, created["payment_id"], "paid")

    assert refused.status_code == 403
    assert refused.json["code"] == "INSUFFICIENT_SCOPE"
    assert the_payment(created["payment_id"]).status == "created"


def test_two_racing_simulations_pay_the_payment_once(client, live_server, test_auth):
    from concurrent.futures import ThreadPoolExecutor

    import requests

    from gateway.payments.models.payment import Transaction

    created = create_payment(client, test_auth)
    url = f"{live_server}/api/v1/test/payments/{created['payment_id']}/simulate"

    def press(outcome):
        return requests.post(url, json={"outcome": outcome}, headers=test_auth, timeout=30)

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(press, ["paid", "paid"]))

    # The second press finds the claim taken (409), or sends the same text again, which is stored
    # once: either way one completion.
    assert 200 in [answer.status_code for answer in answers]
    assert {answer.status_code for answer in answers} <= {200, 409}
    assert the_payment(created["payment_id"]).status == "completed"
    assert len(db.session.execute(db.select(Transaction)).scalars().all()) == 1
    assert [sms.status for sms in stored_texts()] == ["matched"]


def test_each_key_lists_the_webhook_deliveries_of_its_own_mode(client, live_auth, test_auth):
    test = create_payment(client, test_auth, callback_url="http://127.0.0.1:9/hooks")
    assert simulate(client, test_auth, test["payment_id"], "expired").status_code == 200

    seen_by_test = client.get("/api/v1/webhooks/deliveries", headers=test_auth).json["data"]
    seen_by_live = client.get("/api/v1/webhooks/deliveries", headers=live_auth).json["data"]

    assert [item["event"] for item in seen_by_test] == ["payment.expired"]
    assert seen_by_live == []


@pytest.mark.parametrize(("outcome", "status"), [("paid", "completed"), ("mismatch", "processing")])
def test_a_simulated_payment_is_charged_the_first_methods_fee(
    client, brand, test_auth, outcome, status
):
    from tests.factories import PaymentMethodFactory

    PaymentMethodFactory(brand=brand, fee_percent=Decimal("2"), fee_min=Decimal("15"))
    created = create_payment(client, test_auth)

    answer = simulate(client, test_auth, created["payment_id"], outcome)

    assert answer.status_code == 200 and answer.json["data"]["status"] == status
    assert (answer.json["data"]["fee"], answer.json["data"]["amount_paid"]) == ("15.00", "515.00")
    [sms] = stored_texts()
    assert sms.amount == (Decimal("515.00") if outcome == "paid" else Decimal("514.00"))
