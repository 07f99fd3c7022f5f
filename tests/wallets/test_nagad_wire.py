"""Nagad's protocol against the local stand-in: sealing, signatures, each call's path, headers and
body, the answers refused, verify's retries and the purchase cancel."""

from decimal import Decimal

import pytest

from gateway.wallets import nagad_wire as wire
from tests.wallet_standins.nagad import NagadStandIn, bare_base64, new_key_pair

SHORT = (2, 2)  # long enough for a loaded machine; the stalls wait on an event


@pytest.fixture(scope="module")
def nagad():
    with NagadStandIn().running() as standin:
        yield standin


@pytest.fixture
def keys(nagad):
    nagad.answer_fault = None
    nagad.refuse_refunds = None
    return wire.load_keys(
        nagad.origin, nagad.merchant_id, nagad.merchant_private_pem, nagad.nagad_public_pem
    )


def open_checkout(keys, order_id, amount="150.50"):
    reference, challenge = wire.initialize(keys, order_id, "203.0.113.9", SHORT)
    page = wire.complete(
        keys, reference, order_id, Decimal(amount), challenge, "http://shop.test/back", {}, None,
        SHORT,
    )  # fmt: skip
    return reference, page


def test_a_checkout_initialized_completed_paid_and_verified(nagad, keys):
    reference, page = open_checkout(keys, "ORDERWIRE1")
    assert page == f"{nagad.origin}/pay/{reference}"
    callback = nagad.callback_for(reference, "Success")
    assert "payment_ref_id=" in callback and "status=Success" in callback

    answer = wire.verify(keys, reference, SHORT)

    assert answer["status"] == "Success"
    assert answer["orderId"] == "ORDERWIRE1"
    assert answer["amount"] == "150.50"
    assert answer["issuerPaymentRefNo"]
    method, path, headers = next(r for r in nagad.requests if "initialize" in r[1])
    assert (method, path) == (
        "POST",
        f"/api/dfs/check-out/initialize/{nagad.merchant_id}/ORDERWIRE1",
    )
    assert headers["X-Km-Api-Version"] == "v-0.2.0"
    assert headers["X-Km-Ip-V4"] == "203.0.113.9"
    assert headers["X-Km-Client-Type"] == "PC_WEB"


def test_keys_pasted_as_bare_base64_work_like_pem(nagad):
    keys = wire.load_keys(
        nagad.origin + "/",
        nagad.merchant_id,
        bare_base64(nagad.merchant_private_pem),
        bare_base64(nagad.nagad_public_pem),
    )
    reference, _ = open_checkout(keys, "ORDERWIRE2")
    assert wire.verify(keys, reference, SHORT)["status"] == "Ready"


@pytest.mark.parametrize(
    ("private", "public", "field"),
    [
        ("not a key", None, "merchant_private_key"),
        ("", None, "merchant_private_key"),
        (None, "QUJD", "wallet_public_key"),
        (None, "-----BEGIN PUBLIC KEY-----\nQUJD\n-----END PUBLIC KEY-----", "wallet_public_key"),
    ],
)
def test_bad_keys_name_the_field_without_echoing_it(nagad, private, public, field):
    with pytest.raises(ValueError) as error:
        wire.load_keys(
            nagad.origin,
            nagad.merchant_id,
            nagad.merchant_private_pem if private is None else private,
            nagad.nagad_public_pem if public is None else public,
        )
    assert str(error.value).startswith(field)
    assert "QUJD" not in str(error.value) and "not a key" not in str(error.value).split(":", 1)[1]


def test_nagad_refuses_a_request_signed_by_another_merchant_key(nagad):
    _, stranger_pem, _ = new_key_pair()
    keys = wire.load_keys(nagad.origin, nagad.merchant_id, stranger_pem, nagad.nagad_public_pem)
    with pytest.raises(wire.NagadError) as error:
        wire.initialize(keys, "ORDERWIRE3", None, SHORT)
    assert error.value.reason == "InvalidSignature"


def test_nagad_refuses_an_unknown_merchant_and_a_duplicate_order(nagad, keys):
    other = wire.load_keys(nagad.origin, "999", nagad.merchant_private_pem, nagad.nagad_public_pem)
    with pytest.raises(wire.NagadError) as error:
        wire.initialize(other, "ORDERWIRE4", None, SHORT)
    assert error.value.reason == "InvalidMerchant"
    wire.initialize(keys, "ORDERWIRE5", None, SHORT)
    with pytest.raises(wire.NagadError) as error:
        wire.initialize(keys, "ORDERWIRE5", None, SHORT)
    assert error.value.reason == "DuplicateOrder"


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("unsigned", "unsigned_answer"),
        ("forged", "bad_signature"),
        # OpenSSL's implicit rejection (the Marvin fix) may turn a ciphertext for another key
        # into random bytes instead of an error; the signature check refuses those.
        ("foreign", ("undecryptable_answer", "bad_signature")),
    ],
)
def test_an_answer_not_sealed_and_signed_by_nagad_is_refused(nagad, keys, fault, reason):
    nagad.answer_fault = fault
    with pytest.raises(wire.NagadAnswerRefused) as error:
        wire.initialize(keys, f"ORDERFAULT{fault}", None, SHORT)
    assert error.value.reason in (reason if isinstance(reason, tuple) else (reason,))


def test_verify_is_asked_again_after_a_timeout(nagad, keys):
    reference, _ = open_checkout(keys, "ORDERWIRE6")
    nagad.callback_for(reference, "Success")
    nagad.release.clear()
    nagad.verify_stalls = 1
    try:
        assert wire.verify(keys, reference, SHORT)["status"] == "Success"
    finally:
        nagad.release.set()
    assert nagad.verify_stalls == 0


def test_verify_gives_up_as_unreachable_after_its_attempts(nagad, keys):
    reference, _ = open_checkout(keys, "ORDERWIRE7")
    nagad.release.clear()
    nagad.verify_stalls = wire.VERIFY_ATTEMPTS
    try:
        with pytest.raises(wire.NagadUnreachable):
            wire.verify(keys, reference, SHORT)
    finally:
        nagad.release.set()


def test_nothing_listening_is_unreachable(keys):
    dead = wire.NagadKeys(
        "http://127.0.0.1:9", keys.merchant_id, keys.merchant_key, keys.wallet_key
    )
    with pytest.raises(wire.NagadUnreachable):
        wire.initialize(dead, "ORDERWIRE8", None, SHORT)


def test_partial_then_full_cancel_and_no_more_than_was_paid(nagad, keys):
    reference, _ = open_checkout(keys, "ORDERWIRE9", "100.00")
    nagad.callback_for(reference, "Success")

    def cancel(amount):
        return wire.cancel_purchase(
            keys, reference, "ORDERWIRE9", "20261128", Decimal("100.00"), Decimal(amount), "R1",
            "return", SHORT,
        )  # fmt: skip

    first = cancel("40.00")
    assert first["status"] == "Success" and first["cancelAmount"] == "40.00"
    assert first["cancelTrxId"]
    with pytest.raises(wire.NagadError) as error:
        cancel("60.01")
    assert error.value.reason == "InvalidAmount"
    assert cancel("60.00")["cancelAmount"] == "60.00"


def test_a_refused_cancel_says_nagads_reason(nagad, keys):
    reference, _ = open_checkout(keys, "ORDERWIRE10", "10.00")
    nagad.callback_for(reference, "Success")
    nagad.refuse_refunds = "Cancel window is over"
    with pytest.raises(wire.NagadError) as error:
        wire.cancel_purchase(
            keys, reference, "ORDERWIRE10", "20261128", Decimal("10"), Decimal("10"), "R", "m",
            SHORT,
        )  # fmt: skip
    assert error.value.message == "Cancel window is over"


def test_the_keys_never_show_in_their_repr(keys):
    assert "PRIVATE" not in repr(keys) and "RSAPrivateKey" not in repr(keys)
