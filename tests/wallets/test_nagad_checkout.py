"""A Nagad API method at the hosted checkout, against the local Nagad stand-in: paid end to end
with the webhook on a real receiver, cancelled, failed, a verify that times out then settles by
the periodic query, forged and replayed callbacks, refused answers, refunds and the credentials
check."""

from datetime import timedelta
from decimal import Decimal
from urllib.parse import urlsplit

import pytest

from gateway.clock import utcnow
from gateway.domain_errors import DomainError
from gateway.extensions import db
from gateway.payments.amounts import in_taka
from gateway.payments.models.payment import Payment, Refund, Transaction
from gateway.payments.refunds import create_refund
from gateway.wallets import nagad as nagad_api
from gateway.wallets import nagad_wire, settle_started_wallet_payments
from gateway.wallets.credentials import add_api_method
from gateway.wallets.models import WalletCredential, WalletPayment
from gateway.webhooks.delivery import deliver_webhook
from gateway.webhooks.models.webhook import WebhookDelivery
from tests.checkout_helpers import THANKS, csrf_token, payment, text_of  # noqa: F401 - fixture
from tests.factories import PaymentFactory, reload
from tests.wallet_standins.nagad import NagadStandIn, new_key_pair
from tests.wallets.bkash_support import wallet_page as wallet_page_of
from tests.webhook_support import receiver  # noqa: F401 - fixture


@pytest.fixture(scope="module")
def nagad():
    with NagadStandIn().running() as standin:
        yield standin


@pytest.fixture(autouse=True)
def quick_nagad(app, nagad, monkeypatch):
    """Short timeouts against the loopback stand-in (the stalls wait on an event, not a clock),
    and no fault left by another test."""
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 2)
    nagad.answer_fault = None
    nagad.refuse_refunds = None
    nagad.refuse_complete = None
    nagad.verify_stalls = 0
    nagad.release.set()


def nagad_method(brand, nagad, **changes):
    base_url = changes.pop("base_url", nagad.origin)
    secrets = {
        "merchant_id": nagad.merchant_id,
        "merchant_private_key": nagad.merchant_private_pem,
        "wallet_public_key": nagad.nagad_public_pem,
        **changes,
    }
    return add_api_method(brand, "nagad", base_url, secrets)


@pytest.fixture
def method(brand, nagad):
    return nagad_method(brand, nagad)


def start(client, payment, method):
    """Press the Nagad button: our answer (a redirect to Nagad's page when it worked)."""
    return client.post(
        f"/checkout/{payment.token}/wallet/{method.id}",
        data={"csrf_token": csrf_token(client, payment)},
    )


def come_back(client, url):
    """The customer's browser following Nagad's redirect to our callback."""
    parts = urlsplit(url)
    return client.get(f"{parts.path}?{parts.query}")


def reference_of(answer):
    return urlsplit(wallet_page_of(answer)).path.rsplit("/", 1)[1]


def paid(client, payment, method, nagad):
    reference = reference_of(start(client, payment, method))
    return reference, come_back(client, nagad.callback_for(reference, "Success"))


def wallet_rows(payment):
    return db.session.execute(
        db.select(WalletPayment)
        .where(WalletPayment.payment_id == payment.id)
        .order_by(WalletPayment.id)
    ).scalars().all()  # fmt: skip


def test_a_payment_paid_in_nagad_completes_once_with_its_webhook(
    client,
    brand,
    nagad,
    method,
    payment,  # noqa: F811
    receiver,  # noqa: F811
):
    brand.webhook_url = receiver.url
    db.session.commit()

    answer = start(client, payment, method)
    reference = reference_of(answer)
    assert wallet_page_of(answer) == f"{nagad.origin}/pay/{reference}"
    checkout = nagad.checkouts[reference]
    assert checkout.amount == Decimal("500.00")
    assert urlsplit(checkout.callback_url).path == f"/checkout/{payment.token}/wallet/return"
    back = come_back(client, nagad.callback_for(reference, "Success"))

    assert back.status_code == 303 and back.headers["Location"].startswith(THANKS)
    done = reload(payment)
    assert done.status == "completed"
    assert done.provider == "nagad" and done.provider_trx_id == checkout.issuer_ref
    (row,) = wallet_rows(payment)
    assert row.state == "settled" and row.provider_payment_id == reference
    delivery = db.session.execute(
        db.select(WebhookDelivery).where(WebhookDelivery.event == "payment.completed")
    ).scalar_one()
    assert deliver_webhook(delivery.id) == "sent"
    (event,) = [e for e in receiver.events() if e["event"] == "payment.completed"]
    assert event["data"]["payment_id"] == payment.public_id
    assert event["data"]["status"] == "completed" and event["data"]["amount_paid"] == "500.00"
    assert event["data"]["trx_id"] == db.session.execute(db.select(Transaction.trx_id)).scalar()

    # A replayed callback completes nothing twice.
    again = come_back(client, nagad.callback_for(reference, "Success"))
    assert again.status_code == 303
    assert db.session.execute(db.select(db.func.count(Transaction.id))).scalar() == 1
    assert (
        db.session.execute(
            db.select(db.func.count(WebhookDelivery.id)).where(
                WebhookDelivery.event == "payment.completed"
            )
        ).scalar()
        == 1
    )


def test_a_cancel_in_nagad_returns_to_the_checkout_and_a_second_trip_can_pay(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    reference = reference_of(start(client, payment, method))
    back = come_back(client, nagad.callback_for(reference, "Aborted"))

    assert back.status_code == 200
    assert "You cancelled the payment in the wallet." in text_of(back)
    assert reload(payment).status == "created"
    assert [row.state for row in wallet_rows(payment)] == ["cancelled"]

    # Nagad refuses an orderId it has seen: the second trip carries another.
    second, back = paid(client, payment, method, nagad)
    assert nagad.checkouts[second].order_id != nagad.checkouts[reference].order_id
    assert reload(payment).status == "completed"


def test_a_failed_nagad_payment_says_why(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    reference = reference_of(start(client, payment, method))
    back = come_back(client, nagad.callback_for(reference, "Failed"))

    assert back.status_code == 200
    assert "The wallet did not take the payment" in text_of(back)
    assert "Nagad: Failed" in text_of(back)
    assert reload(payment).status == "created"


def test_a_verify_that_times_out_is_settled_by_the_periodic_query(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    reference = reference_of(start(client, payment, method))
    callback = nagad.callback_for(reference, "Success")
    nagad.release.clear()
    nagad.verify_stalls = nagad_wire.VERIFY_ATTEMPTS
    back = come_back(client, callback)
    nagad.release.set()

    assert back.status_code == 200
    assert "has not confirmed your payment yet" in text_of(back)
    assert reload(payment).status == "created"
    assert [row.state for row in wallet_rows(payment)] == ["started"]

    settle_started_wallet_payments(now=utcnow() + timedelta(minutes=2))

    done = reload(payment)
    assert done.status == "completed"
    assert done.provider_trx_id == nagad.checkouts[reference].issuer_ref


def test_a_callback_saying_success_for_an_unpaid_checkout_completes_nothing(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    reference = reference_of(start(client, payment, method))
    forged = (
        f"/checkout/{payment.token}/wallet/return?payment_ref_id={reference}"
        "&status=Success&status_code=00_0000_000&issuer_payment_ref=FAKE1234"
    )

    back = client.get(forged)

    assert back.status_code == 200
    assert reload(payment).status == "created"
    assert [row.state for row in wallet_rows(payment)] == ["started"]


def test_nagad_paid_a_wrong_amount_is_refused(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    reference = reference_of(start(client, payment, method))
    nagad.checkouts[reference].amount = Decimal("5.00")  # what Nagad says it took

    back = come_back(client, nagad.callback_for(reference, "Success"))

    assert back.status_code == 200
    assert "not 500.00" in text_of(back)
    assert reload(payment).status == "created"
    assert [row.state for row in wallet_rows(payment)] == ["unapplied"]


def test_another_payments_reference_in_the_callback_completes_neither_twice(
    client,
    brand,
    nagad,
    method,
    payment,  # noqa: F811
):
    other = PaymentFactory(brand=brand, amount=Decimal("20.00"))
    db.session.commit()
    other_reference, _ = paid(client, other, method, nagad)
    assert reload(other).status == "completed"
    reference_of(start(client, payment, method))

    back = come_back(
        client,
        nagad.callback_for(other_reference, "Success").replace(other.token, payment.token),
    )

    assert back.status_code == 200
    assert reload(payment).status == "created"
    assert db.session.execute(db.select(db.func.count(Transaction.id))).scalar() == 1


@pytest.mark.parametrize("fault", ["unsigned", "forged", "foreign"])
def test_an_answer_not_signed_by_nagad_starts_nothing(
    client,
    nagad,
    method,
    payment,  # noqa: F811
    fault,
):
    nagad.answer_fault = fault

    answer = start(client, payment, method)

    # Nothing to redirect to: the pay page again, with an error status (the framework's choice).
    assert answer.status_code >= 400
    assert "could not start the payment" in text_of(answer)
    assert wallet_rows(payment) == []
    assert reload(payment).status == "created"


def test_an_order_nagad_refuses_is_shown_with_its_reason_and_the_trip_closed(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    nagad.refuse_complete = "Merchant daily limit exceeded"

    answer = start(client, payment, method)

    assert answer.status_code >= 400
    assert "Merchant daily limit exceeded" in text_of(answer)
    assert [row.state for row in wallet_rows(payment)] == ["failed"]
    assert reload(payment).status == "created"


def test_nagad_out_of_reach_starts_nothing(
    client,
    brand,
    nagad,
    payment,  # noqa: F811
):
    method = nagad_method(brand, nagad, base_url="http://127.0.0.1:9")

    answer = start(client, payment, method)

    assert answer.status_code >= 400
    assert "could not start the payment" in text_of(answer)
    assert wallet_rows(payment) == []


def test_a_trip_after_a_refused_answer_gets_a_new_order_id(
    client,
    nagad,
    method,
    payment,  # noqa: F811
):
    nagad.answer_fault = "forged"
    assert start(client, payment, method).status_code >= 400
    nagad.answer_fault = None

    reference, back = paid(client, payment, method, nagad)

    orders = [c.order_id for c in nagad.checkouts.values() if c.order_id.startswith(
        payment.public_id.replace("-", "")[:14]
    )]  # fmt: skip
    assert len(orders) == 2 and len(set(orders)) == 2
    assert reload(payment).status == "completed"


def test_refunds_go_through_nagads_purchase_cancel(
    app,
    client,
    brand,
    nagad,
    method,
    payment,  # noqa: F811
):
    reference, _ = paid(client, payment, method, nagad)
    transaction = db.session.execute(db.select(Transaction)).scalar_one()

    partial = create_refund(brand, transaction.trx_id, Decimal("200.00"), "one item back")
    assert partial.provider_refund_id.startswith("RF")
    assert nagad.checkouts[reference].cancelled == Decimal("200.00")

    nagad.refuse_refunds = "Cancel window is over"
    with pytest.raises(DomainError) as refused:
        create_refund(brand, transaction.trx_id, Decimal("300.00"))
    assert "Cancel window is over" in refused.value.message
    assert db.session.execute(db.select(db.func.count(Refund.id))).scalar() == 1

    nagad.refuse_refunds = None
    rest = create_refund(brand, transaction.trx_id)
    assert rest.amount == Decimal("300.00") and rest.provider_refund_id
    assert nagad.checkouts[reference].cancelled == Decimal("500.00")
    assert db.session.get(Payment, payment.id).amount_refunded == Decimal("500.00")


def test_the_credentials_check_passes_with_good_credentials(method):
    ok, message = nagad_api.check_credentials(method)
    assert ok, message


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ("wallet_public_key", "Nagad public key"),
        ("merchant_private_key", "InvalidSignature"),
        ("merchant_id", "InvalidMerchant"),
        ("base_url", "could not be reached"),
        ("garbled_key", "merchant_private_key"),
    ],
)
def test_the_credentials_check_reports_what_is_wrong(brand, nagad, change, says):
    _, stranger_private, stranger_public = new_key_pair()
    changes = {
        "wallet_public_key": {"wallet_public_key": stranger_public},
        "merchant_private_key": {"merchant_private_key": stranger_private},
        "merchant_id": {"merchant_id": "123456789012345"},
        "base_url": {"base_url": "http://127.0.0.1:9"},
        "garbled_key": {"merchant_private_key": "-----BEGIN PRIVATE KEY-----\nAAAA"},
    }[change]
    method = nagad_method(brand, nagad, **changes)

    ok, message = nagad_api.check_credentials(method)

    assert not ok
    assert says in message
    assert "PRIVATE KEY" not in message and stranger_private[40:80] not in message


def test_the_command_line_adds_a_nagad_method_with_its_keys_sealed(runner, brand, nagad, tmp_path):
    private, public = tmp_path / "merchant.pem", tmp_path / "nagad.pem"
    private.write_text(nagad.merchant_private_pem)
    public.write_text(nagad.nagad_public_pem)

    result = runner.invoke(
        args=[
            "gateway", "add-method", "--provider", "nagad", "--kind", "api",
            "--base-url", nagad.origin, "--merchant-id", nagad.merchant_id,
            "--merchant-private-key", str(private), "--wallet-public-key", str(public),
        ]
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert "Nagad API" in result.output
    assert "PRIVATE" not in result.output
    row = db.session.execute(db.select(WalletCredential)).scalar_one()
    body = "".join(nagad.merchant_private_pem.splitlines()[1:3])
    assert body not in row.sealed and nagad.merchant_id not in row.sealed
    from gateway.payments.models.payment_method import PaymentMethod

    method = db.session.get(PaymentMethod, row.method_id)
    assert nagad_api.check_credentials(method)[0]


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        ("--merchant-id", "merchant_id"),
        ("--wallet-public-key", "wallet_public_key"),
    ],
)
def test_the_command_line_names_a_missing_nagad_credential(
    runner, brand, nagad, tmp_path, missing, field
):
    private, public = tmp_path / "merchant.pem", tmp_path / "nagad.pem"
    private.write_text(nagad.merchant_private_pem)
    public.write_text(nagad.nagad_public_pem)
    args = {
        "--merchant-id": nagad.merchant_id,
        "--merchant-private-key": str(private),
        "--wallet-public-key": str(public),
    }
    del args[missing]
    flat = [item for pair in args.items() for item in pair]

    result = runner.invoke(
        args=["gateway", "add-method", "--provider", "nagad", "--kind", "api",
              "--base-url", nagad.origin, *flat]
    )  # fmt: skip

    assert result.exit_code != 0
    assert field.replace("_", " ").capitalize() in result.output
    assert db.session.execute(db.select(WalletCredential)).scalar_one_or_none() is None


def test_a_payment_in_another_currency_goes_to_nagad_in_taka(client, brand, nagad, method):
    dollars = PaymentFactory(
        brand=brand,
        amount=Decimal("10.00"),
        currency="USD",
        amount_bdt=Decimal("1215.00"),
        exchange_rate=Decimal("121.5"),
    )
    db.session.commit()

    reference = reference_of(start(client, dollars, method))

    assert nagad.checkouts[reference].amount == Decimal("1215.00")
    come_back(client, nagad.callback_for(reference, "Success"))
    assert reload(dollars).status == "completed"


@pytest.mark.parametrize("fee_percent", ["0", "1.85"])
@pytest.mark.parametrize(
    "rate,parts",
    [
        ("110.001", ["5.00"]),
        ("121.456789", ["3.33", "3.33"]),
        ("84.333333", ["0.01", "9.98"]),
        ("0.999999", ["1.11", "2.22", "3.33"]),
        ("117.77", ["0.07", "0.07", "0.07"]),
    ],
)
def test_a_foreign_payment_refunded_in_parts_returns_exactly_its_taka_amount(
    client, brand, nagad, method, rate, parts, fee_percent
):
    method.fee_percent = Decimal(fee_percent)  # a foreign payment's fee is never refunded
    dollars = PaymentFactory(
        brand=brand,
        amount=Decimal("10.00"),
        currency="USD",
        amount_bdt=in_taka(Decimal("10.00"), rate),
        exchange_rate=Decimal(rate),
    )
    db.session.commit()
    reference, _ = paid(client, dollars, method, nagad)
    assert nagad.checkouts[reference].amount == reload(dollars).amount_paid
    trx_id = db.session.execute(db.select(Transaction.trx_id)).scalar_one()

    for part in parts:
        create_refund(brand, trx_id, Decimal(part))
    create_refund(brand, trx_id)  # the rest

    assert nagad.checkouts[reference].cancelled == dollars.amount_bdt
    assert (reload(dollars).status, dollars.amount_refunded) == ("refunded", Decimal("10.00"))


def test_no_key_reaches_the_log(client, nagad, method, payment, caplog):  # noqa: F811
    caplog.set_level("DEBUG")
    nagad.answer_fault = "forged"
    start(client, payment, method)
    nagad.answer_fault = None
    reference = reference_of(start(client, payment, method))
    come_back(client, nagad.callback_for(reference, "Success"))

    for pem in (nagad.merchant_private_pem, nagad.nagad_public_pem):
        for line in pem.splitlines()[1:-1]:
            assert line not in caplog.text
    assert "PRIVATE KEY" not in caplog.text
