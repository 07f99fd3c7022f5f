"""Cancelling after "I have paid": a confirmation that names the risk, enforced by the server, not
only the page.
"""

import pytest

from gateway.domain_errors import DomainError
from gateway.extensions import db
from gateway.payments.lifecycle import cancel_payment
from gateway.sms.matching import submit_claim
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import (  # noqa: F401 - fixtures
    CART,
    CSRF_FIELD,
    bkash,
    cancel,
    payment,
    reloaded,
    submit_trx_id,
    text_of,
)
from tests.fresh_catalogue import app_with_fresh_catalogue, dispose
from tests.panel.conftest import panel_client as client_of

RISK = "If you already sent the money, cancelling does not return it"


def waiting_token(client, payment):
    page = client.get(f"/checkout/{payment.token}/wait")
    return CSRF_FIELD.search(text_of(page)).group(1)


def test_a_processing_payment_is_not_cancelled_by_a_post_without_the_confirmation(
    client, payment, bkash
):
    submit_trx_id(client, payment, bkash)
    token = waiting_token(client, payment)

    response = client.post(f"/checkout/{payment.token}/cancel", data={"csrf_token": token})

    assert response.status_code == 200
    page = text_of(response)
    assert (
        "Cancel this payment?" in page and RISK in page and "ask Test Shop to send it back" in page
    )
    assert 'name="confirm" value="yes"' in page and f'href="/checkout/{payment.token}/wait"' in page
    assert reloaded(payment).status == "processing"
    assert db.session.execute(db.select(WebhookDelivery)).first() is None


def test_the_confirmed_cancel_cancels_and_returns_to_the_shop(client, payment, bkash):
    submit_trx_id(client, payment, bkash)
    token = waiting_token(client, payment)

    response = client.post(
        f"/checkout/{payment.token}/cancel", data={"csrf_token": token, "confirm": "yes"}
    )

    assert response.status_code == 303
    assert response.headers["Location"] == f"{CART}&payment_id={payment.public_id}&status=cancelled"
    assert reloaded(payment).status == "cancelled"


@pytest.mark.parametrize("confirm", ["", "no", "YES "])
def test_anything_but_the_confirmation_button_s_value_leaves_the_claim_alone(
    client, payment, bkash, confirm
):
    submit_trx_id(client, payment, bkash)
    response = client.post(
        f"/checkout/{payment.token}/cancel",
        data={"csrf_token": waiting_token(client, payment), "confirm": confirm},
    )
    assert response.status_code == 200 and RISK in text_of(response)
    assert reloaded(payment).status == "processing"


def test_the_confirmation_needs_the_csrf_token(client, payment, bkash):
    submit_trx_id(client, payment, bkash)
    response = client.post(f"/checkout/{payment.token}/cancel", data={"confirm": "yes"})
    assert response.status_code == 400
    assert reloaded(payment).status == "processing"


def test_a_payment_nobody_claimed_still_cancels_with_one_tap(client, payment, bkash):
    response = cancel(client, payment)
    assert response.status_code == 303 and reloaded(payment).status == "cancelled"


def test_a_claim_committed_after_the_pay_page_loaded_is_not_cancelled_by_its_tap(
    client, payment, bkash
):
    """The cancel button of a pay page opened before the claim: the customer is asked, not
    cancelled.
    """
    token = CSRF_FIELD.search(text_of(client.get(f"/checkout/{payment.token}"))).group(1)
    submit_claim(payment, "bkash", "8N7A6B5C4D")  # e.g. from a second tab

    response = client.post(f"/checkout/{payment.token}/cancel", data={"csrf_token": token})

    assert response.status_code == 200 and RISK in text_of(response)
    assert reloaded(payment).status == "processing"


def test_an_unconfirmed_cancel_loses_to_a_claim_committed_before_it_runs(brand, payment):
    """The guard is in the UPDATE (from `created` only), whatever the request had read before."""
    submit_claim(payment, "bkash", "8N7A6B5C4D")

    with pytest.raises(DomainError) as refused:
        cancel_payment(payment, from_states=("created",))

    assert refused.value.code == "INVALID_STATE"
    assert reloaded(payment).status == "processing"


def test_the_cancel_confirmation_speaks_bangla(app, client, payment, bkash, tmp_path):
    submit_trx_id(client, payment, bkash)
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        page = text_of(client_of(bangla).get(f"/checkout/{payment.token}/wait?lang=bn"))
    finally:
        dispose(bangla)
    assert RISK not in page
    assert "বাতিল করলে তা ফেরত আসবে না" in page and "হ্যাঁ, পেমেন্ট বাতিল করুন" in page
