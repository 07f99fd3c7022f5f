"""bKash's tokenized checkout through the hosted checkout against the local stand-in: paid once,
cancelled, failed, an execute that times out settled by the periodic query, forged callbacks."""

from datetime import timedelta

import pytest

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.payment import Transaction
from gateway.wallets import settle_started_wallet_payments
from gateway.wallets.bkash import CREATE, EXECUTE, GRANT
from gateway.wallets.models import WalletPayment
from gateway.webhooks.models.event import Event
from tests.checkout_helpers import (  # noqa: F401 - fixtures
    THANKS,
    csrf_token,
    payment,
    reloaded,
    text_of,
)
from tests.factories import PaymentFactory, PaymentMethodFactory
from tests.wallets.bkash_support import (  # noqa: F401 - fixtures
    bkash_api,
    choose_at_bkash,
    come_back,
    pay_through_bkash,
    press_pay_with_bkash,
    standin,
    wallet_page,
)


def wallet_rows(payment):
    return (
        db.session.execute(db.select(WalletPayment).where(WalletPayment.payment_id == payment.id))
        .scalars()
        .all()
    )


def completed_events(payment):
    return db.session.execute(
        db.select(db.func.count()).select_from(Event).where(Event.type == "payment.completed")
    ).scalar()


def test_the_pay_page_offers_pay_with_bkash_without_a_number(client, payment, bkash_api):
    page = text_of(client.get(f"/checkout/{payment.token}"))
    assert "Pay with bKash" in page
    assert bkash_api.number not in page  # the hidden key is never shown


def test_a_paid_bkash_payment_completes_once_with_bkash_s_trx_id(
    client, payment, bkash_api, standin
):
    answer = pay_through_bkash(client, payment, bkash_api)
    assert answer.status_code == 303
    assert answer.headers["Location"] == THANKS or answer.headers["Location"].startswith(THANKS)
    (row,) = wallet_rows(payment)
    bkash_payment = standin.payments[row.provider_payment_id]
    assert bkash_payment["amount"] == "500.00"
    assert bkash_payment["merchantInvoiceNumber"] == payment.public_id.replace("-", "")[:20]
    paid = reloaded(payment)
    assert paid.status == "completed"
    assert row.state == "settled"
    transaction = db.session.execute(
        db.select(Transaction).where(Transaction.payment_id == payment.id)
    ).scalar_one()
    assert transaction.provider == "bkash"
    assert transaction.provider_trx_id == bkash_payment["trxID"]
    assert completed_events(payment) == 1
    # A replay of the callback (the browser's back button, an attacker) completes nothing twice.
    callback = f"/checkout/{payment.token}/wallet/return?paymentID={row.provider_payment_id}"
    again = client.get(callback + "&status=success")
    assert again.status_code == 303
    assert completed_events(payment) == 1
    assert standin.calls(EXECUTE) == 1  # settled rows are not executed again
    assert standin.calls(GRANT) == 1


def test_the_id_token_is_granted_once_for_many_payments(client, brand, bkash_api, standin):
    for _ in range(3):
        pay_through_bkash(client, PaymentFactory(brand=brand), bkash_api)
    assert standin.calls(CREATE) == 3
    assert standin.calls(GRANT) == 1


@pytest.mark.parametrize(
    ("choice", "shown"),
    [
        ("cancel", "You cancelled the payment in the wallet."),
        ("failure", "The wallet did not take the payment"),
    ],
)
def test_a_cancelled_or_failed_bkash_payment_returns_to_the_pay_page_with_the_reason(
    client, payment, bkash_api, standin, choice, shown
):
    answer = pay_through_bkash(client, payment, bkash_api, choice)
    assert answer.status_code == 200
    assert shown in text_of(answer)
    assert "Pay with bKash" in text_of(answer)
    assert reloaded(payment).status == "created"
    (row,) = wallet_rows(payment)
    assert row.state == ("cancelled" if choice == "cancel" else "failed")
    # The customer may try again: a new trip to bKash.
    again = press_pay_with_bkash(client, payment, bkash_api)
    assert wallet_page(again).startswith(standin.origin + "/pay/")
    assert len(wallet_rows(payment)) == 2


def test_a_cancel_callback_for_a_paid_payment_is_not_believed(client, payment, bkash_api, standin):
    started = press_pay_with_bkash(client, payment, bkash_api)
    callback = choose_at_bkash(wallet_page(started), "success")
    (row,) = wallet_rows(payment)
    # bKash executed meanwhile (another tab): a forged "cancel" is checked by the status query.
    standin.payments[row.provider_payment_id].update(
        transactionStatus="Completed", trxID="BFORGED001"
    )
    come_back(client, callback.replace("status=success", "status=cancel"))
    assert reloaded(payment).status == "completed"


def test_an_execute_that_times_out_is_settled_by_the_periodic_query(
    app, client, payment, bkash_api, standin, monkeypatch
):
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    standin.execute_delay = 2  # bKash executes, but answers after our timeout
    answer = pay_through_bkash(client, payment, bkash_api)
    assert answer.status_code == 200
    assert "has not confirmed your payment yet" in text_of(answer)
    assert reloaded(payment).status == "created"
    (row,) = wallet_rows(payment)
    assert row.state == "started"
    assert settle_started_wallet_payments() == []  # under a minute: left alone
    settled = settle_started_wallet_payments(now=utcnow() + timedelta(minutes=2))
    assert [outcome.status for outcome in settled] == ["paid"]
    assert reloaded(payment).status == "completed"
    assert completed_events(payment) == 1


def test_an_answer_with_another_amount_completes_nothing(client, payment, bkash_api, standin):
    standin.tamper_amount = "5.00"
    answer = pay_through_bkash(client, payment, bkash_api)
    assert "The wallet took your money, but it could not pay this payment" in text_of(answer)
    assert reloaded(payment).status == "created"
    (row,) = wallet_rows(payment)
    assert row.state == "unapplied"  # bKash took money: the merchant is shown it
    assert "5.00" in row.last_error


def test_another_payment_s_paymentid_does_not_pay_this_one(client, brand, bkash_api, standin):
    cheap = PaymentFactory(brand=brand, amount=1, amount_bdt=1, amount_paid=1)
    dear = PaymentFactory(brand=brand)
    pay_through_bkash(client, cheap, bkash_api)
    assert reloaded(cheap).status == "completed"
    press_pay_with_bkash(client, dear, bkash_api)
    (cheap_row,) = wallet_rows(cheap)
    forged = f"/checkout/{dear.token}/wallet/return?paymentID={cheap_row.provider_payment_id}"
    answer = client.get(forged + "&status=success")
    assert reloaded(dear).status == "created"
    assert answer.status_code == 200
    assert completed_events(dear) == 1  # the cheap one's only


def test_a_callback_for_a_payment_never_sent_to_bkash_does_nothing(client, payment, bkash_api):
    answer = client.get(f"/checkout/{payment.token}/wallet/return?paymentID=TR001&status=success")
    assert answer.status_code == 200
    assert reloaded(payment).status == "created"


def test_pay_with_bkash_needs_the_form_s_csrf_token(client, payment, bkash_api, standin):
    answer = client.post(f"/checkout/{payment.token}/wallet/{bkash_api.id}", data={})
    assert answer.status_code == 400
    assert standin.calls(CREATE) == 0


def test_a_method_that_is_not_an_api_method_cannot_start(client, payment, brand, standin):
    number = PaymentMethodFactory(brand=brand, number="01712345678")
    answer = client.post(
        f"/checkout/{payment.token}/wallet/{number.id}",
        data={"csrf_token": csrf_token(client, payment)},
    )
    assert answer.status_code == 422
    assert standin.calls(CREATE) == 0


def test_a_trip_never_paid_is_closed_by_the_settle_job_once_its_payment_expired(
    client, payment, bkash_api, standin
):
    from gateway.payments.lifecycle import expire_payment

    press_pay_with_bkash(client, payment, bkash_api)  # the customer never comes back
    later = utcnow() + timedelta(minutes=2)
    assert [o.status for o in settle_started_wallet_payments(now=later)] == ["pending"]
    assert expire_payment(reloaded(payment))
    db.session.commit()
    assert [o.status for o in settle_started_wallet_payments(now=later)] == ["cancelled"]
    (row,) = wallet_rows(payment)
    assert row.state == "cancelled"
    assert settle_started_wallet_payments(now=later) == []


def test_the_settle_job_keeps_the_trip_while_bkash_is_out_of_reach(
    client, payment, bkash_api, standin
):
    press_pay_with_bkash(client, payment, bkash_api)
    standin.__exit__()
    assert settle_started_wallet_payments(now=utcnow() + timedelta(minutes=2)) == []
    (row,) = wallet_rows(payment)
    db.session.refresh(row)
    assert row.state == "started"
    assert "could not be reached" in row.last_error
    assert reloaded(payment).status == "created"


def test_an_older_tab_s_trip_pays_and_the_newer_one_is_closed(client, payment, bkash_api, standin):
    older = wallet_page(press_pay_with_bkash(client, payment, bkash_api))
    newer = wallet_page(press_pay_with_bkash(client, payment, bkash_api))
    assert older != newer
    answer = come_back(client, choose_at_bkash(older, "success"))
    assert answer.status_code == 303
    assert reloaded(payment).status == "completed"
    first, second = sorted(wallet_rows(payment), key=lambda row: row.id)
    assert (first.state, second.state) == ("settled", "started")
    settle_started_wallet_payments(now=utcnow() + timedelta(minutes=2))
    db.session.refresh(second)
    assert second.state == "cancelled"
    assert completed_events(payment) == 1


def test_the_method_s_fee_is_charged_and_paid_through_bkash(client, payment, bkash_api, standin):
    from decimal import Decimal

    from gateway.payments.methods import update_method

    update_method(bkash_api, fee_fixed=Decimal("10.00"))
    assert "৳510.00" in text_of(client.get(f"/checkout/{payment.token}"))
    pay_through_bkash(client, payment, bkash_api)
    (row,) = wallet_rows(payment)
    assert standin.payments[row.provider_payment_id]["amount"] == "510.00"
    paid = reloaded(payment)
    assert (paid.status, paid.fee, paid.amount_paid) == ("completed", 10, 510)


def test_two_racing_callbacks_complete_the_payment_once(
    client, live_server, payment, bkash_api, standin
):
    import threading
    from urllib.parse import urlsplit

    import requests

    callback = choose_at_bkash(
        wallet_page(press_pay_with_bkash(client, payment, bkash_api)), "success"
    )
    parts = urlsplit(callback)
    url = f"{live_server}{parts.path}?{parts.query}"
    answers = []
    start = threading.Barrier(2)

    def come_back_at_once():
        start.wait()
        answers.append(requests.get(url, allow_redirects=False, timeout=30).status_code)

    threads = [threading.Thread(target=come_back_at_once) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [303, 303]
    assert reloaded(payment).status == "completed"
    assert completed_events(payment) == 1
    count = db.session.execute(
        db.select(db.func.count())
        .select_from(Transaction)
        .where(Transaction.payment_id == payment.id)
    ).scalar()
    assert count == 1
