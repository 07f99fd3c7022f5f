"""Payment methods: validation in the service, the operator's commands, the bootstrap bKash
method."""

import pytest

from gateway.domain_errors import DomainError
from gateway.errors import http_status
from gateway.extensions import db
from gateway.payments.methods import (
    add_method,
    list_enabled_methods,
    list_methods,
    normalize_mobile_number,
    update_method,
)
from gateway.payments.models.payment_method import PaymentMethod


def methods_in_database():
    """Every stored method as (provider, number, kind, enabled)."""
    rows = db.session.execute(db.select(PaymentMethod).order_by(PaymentMethod.id)).scalars()
    return [(m.provider, m.number, m.kind, m.enabled) for m in rows]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("01712345678", "01712345678"),
        ("+8801712345678", "01712345678"),
        ("8801712345678", "01712345678"),
        ("017-1234 5678", "01712345678"),
        ("01312345678", "01312345678"),
        ("0171234567", None),
        ("017123456789", None),
        ("01212345678", None),
        ("02712345678", None),
        ("+447712345678", None),
        ("", None),
        (None, None),
        ("01712abc678", None),
        ("017১২৩৪৫৬৭৮", None),
        ("০১৭১২৩৪৫৬৭৮", None),
        ("+৮৮০১৭১২৩৪৫৬৭৮", None),
    ],
)
def test_only_bangladeshi_mobile_numbers_are_accepted(raw, expected):
    assert normalize_mobile_number(raw) == expected


def test_add_method_stores_a_normalised_number_in_display_order(brand):
    first = add_method(brand, "bKash", "+880 1712-345678")
    second = add_method(
        brand,
        "nagad",
        "01812345678",
        "merchant",
        instructions="  Pay at the counter.  ",
        ask_sender_number=True,
    )
    assert (first.provider, first.number, first.kind, first.position) == (
        "bkash",
        "01712345678",
        "personal",
        0,
    )
    assert (second.kind, second.instructions, second.ask_sender_number, second.position) == (
        "merchant",
        "Pay at the counter.",
        True,
        1,
    )
    assert [m.id for m in list_methods(brand)] == [first.id, second.id]


@pytest.mark.parametrize(
    "provider, number, kind, field",
    [
        ("paypal", "01712345678", "personal", "provider"),
        ("bkash", "12345", "personal", "number"),
        ("bkash", "01712345678", "wholesale", "kind"),
    ],
)
def test_add_method_names_the_field_at_fault_and_writes_nothing(
    brand, provider, number, kind, field
):
    with pytest.raises(DomainError) as raised:
        add_method(brand, provider, number, kind)
    assert http_status(raised.value) == 422
    assert raised.value.errors[0]["field"] == field
    assert methods_in_database() == []


def test_the_same_number_twice_for_a_provider_is_refused(brand, other_brand):
    add_method(brand, "bkash", "01712345678")
    with pytest.raises(DomainError) as raised:
        add_method(brand, "bkash", "+8801712345678")
    assert (http_status(raised.value), raised.value.code) == (409, "PAYMENT_METHOD_EXISTS")
    # Another provider, or another brand, may use the same number.
    add_method(brand, "nagad", "01712345678")
    add_method(other_brand, "bkash", "01712345678")
    assert len(methods_in_database()) == 3


def test_disabled_methods_are_not_offered_and_other_brands_methods_never(brand, other_brand):
    shown = add_method(brand, "bkash", "01712345678")
    hidden = add_method(brand, "nagad", "01812345678")
    add_method(other_brand, "rocket", "01912345678")
    update_method(hidden, enabled=False)
    assert [m.id for m in list_enabled_methods(brand)] == [shown.id]


def test_update_method_refuses_a_bad_kind_and_keeps_the_row(brand):
    method = add_method(brand, "bkash", "01712345678")
    with pytest.raises(DomainError):
        update_method(method, kind="boss")
    db.session.expire_all()
    assert methods_in_database() == [("bkash", "01712345678", "personal", True)]


def test_cli_add_method_adds_a_method_for_the_brand(runner, brand):
    result = runner.invoke(
        args=[
            "gateway",
            "add-method",
            "--provider",
            "nagad",
            "--number",
            "01812345678",
            "--kind",
            "agent",
            "--ask-sender-number",
        ]
    )
    assert result.exit_code == 0, result.output
    assert "Nagad agent 01812345678" in result.output
    assert methods_in_database() == [("nagad", "01812345678", "agent", True)]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--provider", "bkash", "--number", "12345"], "Bangladeshi mobile number"),
        (["--provider", "paypal", "--number", "01712345678"], "Invalid value for '--provider'"),
        (
            ["--provider", "bkash", "--number", "01712345678", "--kind", "boss"],
            "Invalid value for '--kind'",
        ),
    ],
)
def test_cli_add_method_fails_clearly_on_bad_input(runner, brand, args, message):
    result = runner.invoke(args=["gateway", "add-method", *args])
    assert result.exit_code != 0
    assert message in result.output
    assert methods_in_database() == []


def test_cli_update_and_list_methods(runner, brand):
    method = add_method(brand, "bkash", "01712345678")
    result = runner.invoke(
        args=["gateway", "update-method", str(method.id), "--disable", "--kind", "merchant"]
    )
    assert result.exit_code == 0, result.output
    db.session.expire_all()
    assert methods_in_database() == [("bkash", "01712345678", "merchant", False)]
    listed = runner.invoke(args=["gateway", "list-methods"])
    assert f"#{method.id} bKash merchant 01712345678 (disabled)" in listed.output


def test_cli_update_method_of_an_unknown_id_fails(runner, brand):
    result = runner.invoke(args=["gateway", "update-method", "999", "--disable"])
    assert result.exit_code != 0
    assert "No such payment method" in result.output


def test_bootstrap_adds_a_demo_bkash_method_and_says_so(runner):
    result = runner.invoke(args=["gateway", "bootstrap", "--password", "correct horse battery"])
    assert result.exit_code == 0, result.output
    assert methods_in_database() == [("bkash", "01700000000", "personal", True)]
    assert "DEMO number" in result.output
    again = runner.invoke(args=["gateway", "bootstrap"])
    assert again.exit_code == 0
    assert len(methods_in_database()) == 1
