"""Test mode's fixtures: a test key and a live key of the brand, and a test payment made through
the API."""

import pytest

from gateway.accounts.api_keys import generate_key


@pytest.fixture
def test_auth(brand):
    """Authorization header of a read+write test key (gw_test_…) of `brand`."""
    _, secret = generate_key(brand, "tests", ["read", "write"], livemode=False)
    assert secret.startswith("gw_test_")
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def live_auth(brand):
    """Authorization header of a read+write live key of `brand`."""
    _, secret = generate_key(brand, "live", ["read", "write"])
    return {"Authorization": f"Bearer {secret}"}


def create_payment(client, headers, **extra):
    """POST /api/v1/payments; the answer's data."""
    body = {"amount": "500.00", "currency": "BDT", "reference": "TEST-1001", **extra}
    answer = client.post("/api/v1/payments", json=body, headers=headers)
    assert answer.status_code == 201, answer.json
    return answer.json["data"]


def simulate(client, headers, payment_id, outcome):
    """POST /api/v1/test/payments/{payment_id}/simulate."""
    return client.post(
        f"/api/v1/test/payments/{payment_id}/simulate", json={"outcome": outcome}, headers=headers
    )
