"""The panel's wallet API form with Nagad: added with its keys sealed and never shown again (not
even on a refused form), bad input beside its field, and the "test the credentials" button
against the local Nagad stand-in."""

import html

import pytest

from gateway.extensions import db
from gateway.payments.models.payment_method import PaymentMethod
from gateway.wallets.credentials import opened
from gateway.wallets.models import WalletCredential
from tests.panel.conftest import admin, as_admin, audit_actions, client, post_form  # noqa: F401
from tests.wallet_standins.nagad import NagadStandIn, bare_base64, new_key_pair

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
