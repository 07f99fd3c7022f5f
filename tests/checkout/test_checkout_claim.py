"""Submitting a TrxID, cancelling, waiting for the SMS and the status JSON the waiting page
polls."""

import pytest

from gateway.extensions import db
from gateway.payments.methods import add_account_method
from gateway.payments.models.payment import Payment
from tests.checkout_helpers import (  # noqa: F401 - fixtures
    CART,
    THANKS,
    bkash,
    cancel,
    csrf_token,
    payment,
    reloaded,
    simulate_sms,
    submit_trx_id,
    text_of,
)
from tests.factories import PaymentFactory, PaymentMethodFactory, completed_payment
from tests.fresh_catalogue import app_with_fresh_catalogue, dispose


def test_a_trx_id_moves_the_payment_to_processing_and_shows_the_waiting_page(
    client, payment, bkash
):
    response = submit_trx_id(client, payment, bkash, trx_id=" 8n7a 6b5c4d ")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/checkout/{payment.token}/wait"
    stored = reloaded(payment)
    assert (stored.status, stored.provider, stored.provider_trx_id) == (
        "processing",
        "bkash",
        "8N7A6B5C4D",
    )
    waiting = client.get(f"/checkout/{payment.token}/wait")
    page = text_of(waiting)
    assert waiting.status_code == 200 and "Confirming your payment" in page
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in page
    assert f'data-status-url="/checkout/{payment.token}/status"' in page
    assert (
        client.get(f"/checkout/{payment.token}").headers["Location"]
        == f"/checkout/{payment.token}/wait"
    )


def test_an_sms_already_here_completes_the_payment_at_submit(client, runner, payment, bkash):
    simulate_sms(runner, "8N7A6B5C4D")
    submit_trx_id(client, payment, bkash)
    assert reloaded(payment).status == "completed"
    response = client.get(f"/checkout/{payment.token}/wait")
    assert response.status_code == 302
    assert (
        response.headers["Location"] == f"{THANKS}?payment_id={payment.public_id}&status=completed"
    )


def test_the_waiting_page_follows_a_completion_by_sms(client, runner, payment, bkash):
    submit_trx_id(client, payment, bkash)
    assert client.get(f"/checkout/{payment.token}/status").get_json() == {
        "status": "processing",
        "redirect_to": None,
    }
    simulate_sms(runner, "8N7A6B5C4D")
    expected = f"{THANKS}?payment_id={payment.public_id}&status=completed"
    assert client.get(f"/checkout/{payment.token}/status").get_json() == {
        "status": "completed",
        "redirect_to": expected,
    }
    assert client.get(f"/checkout/{payment.token}/wait").headers["Location"] == expected


def test_without_a_redirect_url_the_customer_lands_on_the_success_page(client, brand, bkash):
    payment = completed_payment(brand=brand)
    assert (
        client.get(f"/checkout/{payment.token}/wait").headers["Location"]
        == f"/checkout/{payment.token}"
    )
    assert "Payment received" in text_of(client.get(f"/checkout/{payment.token}"))


@pytest.mark.parametrize(
    "status, redirect_to",
    [
        ("cancelled", "page"),
        ("expired", "page"),
        ("failed", "page"),
        ("created", "page"),
        ("processing", None),
    ],
)
def test_status_json_tells_the_waiting_page_where_to_go(client, brand, status, redirect_to):
    payment = PaymentFactory(brand=brand, status=status)
    body = client.get(f"/checkout/{payment.token}/status").get_json()
    assert body == {
        "status": status,
        "redirect_to": f"/checkout/{payment.token}" if redirect_to else None,
    }


def test_status_json_of_an_unknown_token_is_404(client):
    response = client.get("/checkout/nope/status")
    assert (response.status_code, response.get_json()) == (
        404,
        {"status": "not_found", "redirect_to": None},
    )


@pytest.mark.parametrize("trx_id", ["", "12345", "ABC-123!", "A" * 21])
def test_a_malformed_trx_id_is_refused_on_the_page_and_changes_nothing(
    client, payment, bkash, trx_id
):
    response = submit_trx_id(client, payment, bkash, trx_id=trx_id)
    page = text_of(response)
    assert response.status_code == 422
    assert 'aria-invalid="true"' in page and "Please check the details below." in page
    assert reloaded(payment).status == "created"


def test_the_sender_number_is_required_when_the_method_asks_and_stored_normalised(
    client, payment, brand
):
    method = PaymentMethodFactory(brand=brand, ask_sender_number=True)
    missing = submit_trx_id(client, payment, method)
    assert missing.status_code == 422 and "Enter the number you sent the money from." in text_of(
        missing
    )
    wrong = submit_trx_id(client, payment, method, sender_number="12345")
    assert wrong.status_code == 422 and "11-digit mobile number" in text_of(wrong)
    assert reloaded(payment).status == "created"
    assert (
        submit_trx_id(client, payment, method, sender_number="+880 1811-223344").status_code == 303
    )
    assert (reloaded(payment).status, reloaded(payment).sender_number) == (
        "processing",
        "01811223344",
    )


def test_a_disabled_or_foreign_method_is_refused(client, payment, brand, other_brand):
    disabled = PaymentMethodFactory(brand=brand, enabled=False)
    foreign = PaymentMethodFactory(brand=other_brand)
    for method in (disabled, foreign):
        response = submit_trx_id(client, payment, method)
        assert response.status_code == 422 and "no longer offered" in text_of(response)
    assert reloaded(payment).status == "created"


def test_a_trx_id_another_payment_holds_is_refused_in_the_customers_language(
    client, payment, brand, bkash
):
    PaymentFactory(brand=brand, status="processing", provider="bkash", provider_trx_id="8N7A6B5C4D")
    client.get(f"/checkout/{payment.token}?lang=bn")
    refused = submit_trx_id(client, payment, bkash, trx_id="8n7a6b5c4d")
    assert refused.status_code == 422
    assert "এই TrxID আরেকটি পেমেন্টে ইতিমধ্যে ব্যবহার করা হয়েছে।" in text_of(refused)
    assert reloaded(payment).status == "created"


def test_a_trx_id_sent_after_the_payment_expired_shows_the_expired_page(client, payment, bkash):
    token = csrf_token(client, payment)  # the customer opened the page while it was open
    db.session.execute(db.update(Payment).where(Payment.id == payment.id).values(status="expired"))
    db.session.commit()
    response = client.post(
        f"/checkout/{payment.token}/claim",
        data={"csrf_token": token, "method_id": bkash.id, "trx_id": "8N7A6B5C4D"},
    )
    assert (
        response.status_code == 303 and response.headers["Location"] == f"/checkout/{payment.token}"
    )
    assert reloaded(payment).status == "expired" and reloaded(payment).provider_trx_id is None


@pytest.mark.parametrize("path", ["claim", "cancel"])
def test_a_form_without_its_csrf_token_is_refused_and_changes_nothing(client, payment, bkash, path):
    response = client.post(
        f"/checkout/{payment.token}/{path}", data={"method_id": bkash.id, "trx_id": "8N7A6B5C4D"}
    )
    assert response.status_code == 400
    assert "Please try again" in text_of(
        response
    ) and f'href="/checkout/{payment.token}"' in text_of(response)
    assert reloaded(payment).status == "created"


def test_cancel_sends_the_customer_to_cancel_url_with_the_payment_and_status(
    client, payment, bkash
):
    response = cancel(client, payment)
    assert response.status_code == 303
    assert (
        response.headers["Location"]
        == f"https://shop.example/cart?step=2&payment_id={payment.public_id}&status=cancelled"
    )
    assert reloaded(payment).status == "cancelled"
    assert "Payment cancelled" in text_of(client.get(f"/checkout/{payment.token}"))


def test_cancel_without_a_cancel_url_shows_the_cancelled_page(client, brand, bkash):
    payment = PaymentFactory(brand=brand)
    response = cancel(client, payment)
    assert response.headers["Location"] == f"/checkout/{payment.token}"
    assert reloaded(payment).status == "cancelled"


def test_cancelling_a_completed_payment_changes_nothing(client, payment, brand):
    paid = completed_payment(brand=brand)
    token = csrf_token(client, payment)  # a valid token of this visit, posted to the paid payment
    response = client.post(f"/checkout/{paid.token}/cancel", data={"csrf_token": token})
    assert response.status_code == 303 and response.headers["Location"] == f"/checkout/{paid.token}"
    assert reloaded(paid).status == "completed"


def test_a_sender_number_in_bangla_digits_is_refused_like_the_trx_id(client, payment, brand):
    method = PaymentMethodFactory(brand=brand, ask_sender_number=True)

    response = submit_trx_id(client, payment, method, sender_number="017১২৩৪৫৬৭৮")

    assert response.status_code == 422 and "11-digit mobile number" in text_of(response)
    assert (reloaded(payment).status, reloaded(payment).sender_number) == ("created", None)


def post_reference(client, payment, method, reference):
    """Post a manual or bank method's reference form as the pay page's own form would."""
    return client.post(
        f"/checkout/{payment.token}/manual",
        data={
            "csrf_token": csrf_token(client, payment),
            "method_id": method.id,
            "reference": reference,
        },
        content_type="multipart/form-data",
    )


@pytest.mark.parametrize("kind", ["manual", "bank"])
def test_a_nul_in_the_reference_is_the_field_s_error_and_claims_nothing(
    client, payment, brand, kind
):
    method = add_account_method(
        brand,
        kind,
        display_name="Cash",
        bank_name="BRAC Bank",
        account_name="Shop",
        account_number="ACC-0042",
    )

    response = post_reference(client, payment, method, "DEP\x00123")

    assert response.status_code == 422
    assert f'id="reference-error-{method.id}"' in response.get_data(as_text=True)
    assert (reloaded(payment).status, reloaded(payment).provider_trx_id) == ("created", None)


def test_the_refusal_of_a_nul_in_the_reference_speaks_bangla(app, payment, brand, tmp_path):
    method = add_account_method(
        brand, "manual", display_name="Cash", account_name="Shop", account_number="ACC-0042"
    )
    bangla = app_with_fresh_catalogue(app, tmp_path)
    try:
        client = bangla.test_client()
        client.get(f"/checkout/{payment.token}?lang=bn")
        page = post_reference(client, payment, method, "DEP\x00123").get_data(as_text=True)
    finally:
        dispose(bangla)
    assert "NUL অক্ষর" in page and "Must not contain" not in page
