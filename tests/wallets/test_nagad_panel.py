"""The panel's wallet API form with Nagad: added with its keys sealed and never shown again (not
even on a refused form), bad input beside its field, and the "test the credentials" button
against the local Nagad stand-in; a refund Nagad left unanswered, settled by hand."""

import html
from datetime import timedelta
from decimal import Decimal

import pytest
from freezegun import freeze_time

from gateway.clock import utcnow
from gateway.domain_errors import RefundUndecided
from gateway.extensions import db
from gateway.payments.models.payment import Payment, Refund, Transaction
from gateway.payments.models.payment_method import PaymentMethod
from gateway.payments.refunds import create_refund
from gateway.wallets.credentials import opened
from gateway.wallets.models import WalletCredential, WalletRefund
from gateway.wallets.refunds import settle_wallets
from tests.checkout_helpers import payment  # noqa: F401 - fixtures
from tests.panel.conftest import admin, as_admin, audit_actions, client, post_form  # noqa: F401
from tests.wallet_standins.nagad import NagadStandIn, bare_base64, new_key_pair
from tests.wallets.test_nagad_checkout import nagad_method, paid

ADD = "/panel/settings/methods/wallet-api"


@pytest.fixture(scope="module")
def nagad():
    with NagadStandIn().running() as standin:
        yield standin


def nagad_form(nagad, **changes):
    fields = {
        "provider": "nagad",
        "display_name": "Nagad",
        "base_url": nagad.origin,
        "merchant_id": nagad.merchant_id,
        "merchant_private_key": nagad.merchant_private_pem,
        "wallet_public_key": bare_base64(nagad.nagad_public_pem),
        **changes,
    }
    return {f"wallet-{name}": value for name, value in fields.items()}


def key_body(pem):
    return "".join(pem.splitlines()[1:4])


def test_a_nagad_account_is_added_sealed_and_its_keys_never_shown(
    as_admin,  # noqa: F811
    brand,
    nagad,
):
    added = post_form(as_admin, ADD, nagad_form(nagad), follow_redirects=True)

    assert added.status_code == 200
    page = html.unescape(added.get_data(as_text=True))
    assert "Nagad API added" in page
    method = db.session.execute(db.select(PaymentMethod)).scalar_one()
    assert (method.provider, method.kind, method.display_name) == ("nagad", "api", "Nagad")
    assert opened(method)[1]["merchant_private_key"] == nagad.merchant_private_pem.strip()
    row = db.session.execute(db.select(WalletCredential)).scalar_one()
    assert key_body(nagad.merchant_private_pem) not in row.sealed
    assert key_body(nagad.merchant_private_pem) not in page
    assert bare_base64(nagad.nagad_public_pem)[:40] not in page
    assert "payment_method.add" in [action for action, _, _ in audit_actions(brand)]


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"base_url": "ftp://nagad.example"}, "Base URL must be"),
        ({"merchant_id": ""}, "Merchant id is required."),
        ({"wallet_public_key": ""}, "Wallet public key is required."),
    ],
)
def test_bad_input_is_refused_beside_the_field_without_echoing_the_keys(
    as_admin,  # noqa: F811
    nagad,
    changes,
    says,
):
    answer = post_form(as_admin, ADD, nagad_form(nagad, **changes))

    assert answer.status_code in (400, 422)
    page = html.unescape(answer.get_data(as_text=True))
    assert says in page
    assert key_body(nagad.merchant_private_pem) not in page
    assert db.session.execute(db.select(PaymentMethod)).scalar_one_or_none() is None


def test_the_test_button_says_the_credentials_work(as_admin, nagad):  # noqa: F811
    post_form(as_admin, ADD, nagad_form(nagad))
    method = db.session.execute(db.select(PaymentMethod)).scalar_one()

    page = post_form(
        as_admin, f"/panel/settings/methods/{method.id}/check", follow_redirects=True
    ).get_data(as_text=True)

    assert "The credentials work" in html.unescape(page)


def test_the_test_button_says_what_is_wrong_with_bad_credentials(as_admin, nagad):  # noqa: F811
    _, stranger_private, _ = new_key_pair()
    post_form(as_admin, ADD, nagad_form(nagad, merchant_private_key=stranger_private))
    method = db.session.execute(db.select(PaymentMethod)).scalar_one()

    page = html.unescape(
        post_form(
            as_admin, f"/panel/settings/methods/{method.id}/check", follow_redirects=True
        ).get_data(as_text=True)
    )

    assert "The credentials did not work" in page
    assert "InvalidSignature" in page and "merchant private key" in page
    assert key_body(stranger_private) not in page


def test_a_nagad_refund_left_pending_is_settled_by_hand_and_audited(
    app,
    as_admin,  # noqa: F811
    brand,
    nagad,
    payment,  # noqa: F811
    monkeypatch,
):
    method = nagad_method(brand, nagad)
    reference, _ = paid(as_admin, payment, method, nagad)
    db.session.expire_all()  # the payment as the callback left it
    transaction = db.session.execute(db.select(Transaction)).scalar_one()
    monkeypatch.setitem(app.config, "WALLET_HTTP_TIMEOUT", 0.5)
    nagad.release.clear()
    nagad.cancel_stalls = 1  # Nagad refunds, its answer never comes
    with pytest.raises(RefundUndecided) as pending:
        create_refund(brand, transaction.trx_id, Decimal("200.00"), "one item back")
    nagad.release.set()
    assert "Nagad cannot be asked" in pending.value.message
    assert nagad.checkouts[reference].cancelled == Decimal("200.00")
    assert db.session.get(Payment, payment.id).amount_refunded == 0
    # Nagad has no refund status query: the job leaves it to the merchant.
    assert settle_wallets(now=utcnow() + timedelta(minutes=2)) == []
    attempt = db.session.execute(db.select(WalletRefund)).scalar_one()
    settle = f"/panel/payments/{payment.public_id}/wallet-refunds/{attempt.id}"
    # At first the request that sent it may still get Nagad's answer: neither shown nor settled.
    page = html.unescape(
        as_admin.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
    )
    assert "is pending at Nagad" not in page
    early = post_form(as_admin, f"{settle}/not_made", follow_redirects=True)
    assert "still being sent to Nagad" in html.unescape(early.get_data(as_text=True))
    db.session.refresh(attempt)
    assert attempt.state == "pending"

    with freeze_time(utcnow() + timedelta(minutes=2)):
        page = html.unescape(
            as_admin.get(f"/panel/payments/{payment.public_id}").get_data(as_text=True)
        )
        assert "is pending at Nagad" in page and "Nagad cannot be asked" in page
        made = post_form(as_admin, f"{settle}/made", {"reference": "RF42"}, follow_redirects=True)

    assert "Refunded" in html.unescape(made.get_data(as_text=True))
    db.session.expire_all()
    refund = db.session.execute(db.select(Refund)).scalar_one()
    assert (refund.amount, refund.provider_refund_id) == (Decimal("200.00"), "RF42")
    assert db.session.get(Payment, payment.id).amount_refunded == Decimal("200.00")
    db.session.refresh(attempt)
    assert (attempt.state, attempt.refund_id) == ("made", refund.id)
    assert "payment.wallet_refund_made" in [action for action, _, _ in audit_actions(brand)]
    with freeze_time(utcnow() + timedelta(minutes=2)):
        again = post_form(as_admin, f"{settle}/not_made", follow_redirects=True)
    assert "already settled" in html.unescape(again.get_data(as_text=True))
    assert db.session.execute(db.select(db.func.count(Refund.id))).scalar() == 1
    assert nagad.checkouts[reference].cancelled == Decimal("200.00")  # never sent twice
