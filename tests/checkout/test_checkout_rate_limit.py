"""TrxID attempts per payment are rate limited (in an app with limits on; the test config turns them
off).
"""

import pytest

from tests.checkout_helpers import (
    limited_app,  # noqa: F401 - fixtures
    reloaded,
    submit_trx_id,
    text_of,
)
from tests.factories import PaymentFactory, PaymentMethodFactory

USED_TRX_ID = "USED000001"


@pytest.fixture
def shop(limited_app):
    """A brand's bKash method, and a rival payment already holding USED_TRX_ID so that claims of it
    fail.
    """
    method = PaymentMethodFactory()
    PaymentFactory(
        brand=method.brand, status="processing", provider="bkash", provider_trx_id=USED_TRX_ID
    )
    return method


def test_a_third_refused_trx_id_for_one_payment_gets_the_too_many_attempts_page(limited_app, shop):
    client = limited_app.test_client()
    payment = PaymentFactory(brand=shop.brand)
    for _ in range(2):
        assert submit_trx_id(client, payment, shop, trx_id=USED_TRX_ID).status_code == 422
    blocked = submit_trx_id(client, payment, shop, trx_id="GOOD000001")
    assert blocked.status_code == 429
    assert "Too many attempts" in text_of(blocked) and "Back to the payment page" in text_of(
        blocked
    )
    assert reloaded(payment).status == "created"


def test_the_too_many_attempts_page_says_when_to_try_again(limited_app, shop):
    client = limited_app.test_client()
    payment = PaymentFactory(brand=shop.brand)
    for _ in range(2):
        submit_trx_id(client, payment, shop, trx_id=USED_TRX_ID)

    blocked = submit_trx_id(client, payment, shop, trx_id="GOOD000001")

    assert blocked.status_code == 429 and 1 <= int(blocked.headers["Retry-After"]) <= 3600


def test_the_limit_counts_per_payment(limited_app, shop):
    client = limited_app.test_client()
    first, second = PaymentFactory(brand=shop.brand), PaymentFactory(brand=shop.brand)
    for _ in range(2):
        submit_trx_id(client, first, shop, trx_id=USED_TRX_ID)
    assert submit_trx_id(client, second, shop, trx_id="GOOD000002").status_code == 303
    assert reloaded(second).status == "processing"


def test_typos_caught_by_the_form_do_not_use_up_attempts(limited_app, shop):
    client = limited_app.test_client()
    payment = PaymentFactory(brand=shop.brand)
    for typo in ("", "12", "ABC-DEF-!"):
        assert submit_trx_id(client, payment, shop, trx_id=typo).status_code == 422
    assert submit_trx_id(client, payment, shop, trx_id="GOOD000003").status_code == 303
    assert reloaded(payment).status == "processing"
