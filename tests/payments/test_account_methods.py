"""Manual and bank methods as rows: the service's field checks and `flask gateway add-method --kind
manual|bank`, wallets untouched."""

import pytest

from gateway.domain_errors import DomainError, ValidationFailed
from gateway.extensions import db
from gateway.payments.manual import submit_manual_claim
from gateway.payments.methods import add_account_method, add_method, update_method
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import PaymentFactory, reload


def rows():
    return db.session.execute(db.select(PaymentMethod).order_by(PaymentMethod.id)).scalars().all()


def test_a_manual_method_keeps_its_fields_and_a_hidden_unique_key(brand):
    first = add_account_method(
        brand, "manual", display_name="Cash", account_name="Shop", account_number="A-1"
    )
    second = add_account_method(
        brand, "manual", display_name="Cash 2", account_name="Shop", account_number="A-1"
    )
    assert (first.provider, first.kind, first.proof) == ("manual", "manual", "optional")
    assert first.number != second.number and first.number.startswith("M")
    assert first.is_account and second.position == first.position + 1


def test_a_bank_method_is_named_after_its_bank(brand):
    method = add_account_method(
        brand, "bank", bank_name="BRAC Bank", account_name="Shop", account_number="1303200002001"
    )
    assert (method.provider, method.display_name, method.proof) == ("bank", "BRAC Bank", None)


@pytest.mark.parametrize(
    ("kind", "fields", "field"),
    [
        ("manual", {"account_name": "S", "account_number": "1"}, "display_name"),
        ("manual", {"display_name": "C", "account_number": "1"}, "account_name"),
        (
            "manual",
            {"display_name": "C", "account_name": "S", "account_number": " "},
            "account_number",
        ),
        ("bank", {"account_name": "S", "account_number": "1"}, "bank_name"),
        (
            "manual",
            {"display_name": "C", "account_name": "S", "account_number": "1", "proof": "maybe"},
            "proof",
        ),
        (
            "manual",
            {"display_name": "C" * 81, "account_name": "S", "account_number": "1"},
            "display_name",
        ),
        (
            "bank",
            {
                "bank_name": "B",
                "account_name": "S",
                "account_number": "1",
                "instructions_bn": "x" * 1001,
            },
            "instructions_bn",
        ),
        (
            "manual",
            {"display_name": "C\x00", "account_name": "S", "account_number": "1"},
            "display_name",
        ),
        ("personal", {"display_name": "C", "account_name": "S", "account_number": "1"}, "kind"),
    ],
)
def test_bad_fields_are_refused_naming_the_field(brand, kind, fields, field):
    with pytest.raises(ValidationFailed) as caught:
        add_account_method(brand, kind, **fields)
    assert caught.value.errors[0]["field"] == field
    assert rows() == []


def test_a_wallet_cannot_become_manual_nor_a_manual_method_a_wallet(brand):
    wallet = add_method(brand, "bkash", "01712345678")
    manual = add_account_method(
        brand, "manual", display_name="Cash", account_name="Shop", account_number="A-1"
    )
    with pytest.raises(DomainError):
        update_method(wallet, kind="manual")
    with pytest.raises(DomainError):
        update_method(manual, kind="personal")
    db.session.rollback()
    assert [(m.provider, m.kind) for m in rows()] == [("bkash", "personal"), ("manual", "manual")]


def test_cli_adds_a_manual_and_a_bank_method(runner, brand):
    manual = runner.invoke(
        args=[
            "gateway", "add-method", "--kind", "manual", "--name", "Cash deposit",
            "--account-name", "Shop Ltd", "--account-number", "0123-456",
            "--instructions", "Deposit at any branch", "--instructions-bn", "যেকোনো শাখায়",
            "--proof", "required",
        ]
    )  # fmt: skip
    assert manual.exit_code == 0, manual.output
    assert "manual 'Cash deposit' Shop Ltd 0123-456, proof required" in manual.output
    bank = runner.invoke(
        args=[
            "gateway", "add-method", "--kind", "bank", "--bank", "BRAC Bank",
            "--account-name", "Shop Ltd", "--account-number", "1303200002001",
            "--branch", "Gulshan",
        ]
    )  # fmt: skip
    assert bank.exit_code == 0, bank.output
    made = rows()
    assert [(m.kind, m.instructions_bn, m.bank_branch) for m in made] == [
        ("manual", "যেকোনো শাখায়", None),
        ("bank", None, "Gulshan"),
    ]
    listed = runner.invoke(args=["gateway", "list-methods"])
    assert "bank 'BRAC Bank' BRAC Bank Shop Ltd 1303200002001" in listed.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--kind", "manual", "--name", "Cash", "--account-name", "S"],
            "Invalid value for --account-number: Account number is required.",
        ),
        (
            ["--kind", "bank", "--account-name", "S", "--account-number", "1"],
            "Invalid value for --bank: Bank name is required.",
        ),
        (
            [
                "--kind",
                "manual",
                "--name",
                "C",
                "--account-name",
                "S",
                "--account-number",
                "1",
                "--proof",
                "maybe",
            ],
            "Invalid value for '--proof'",
        ),
        (
            ["--kind", "manual", "--provider", "bkash", "--number", "01712345678"],
            "not --provider/--number",
        ),
        (
            ["--provider", "bkash", "--number", "01712345678", "--account-name", "S"],
            "--account-name",
        ),
        (["--kind", "personal"], "needs --provider and --number"),
    ],
)
def test_cli_bad_input_fails_naming_the_option(runner, brand, args, message):
    result = runner.invoke(args=["gateway", "add-method", *args])
    assert result.exit_code != 0
    assert message in result.output
    assert rows() == []


@pytest.mark.parametrize("reference", ["DEP\x00123", "DEP\ud800123", "ab"])
def test_a_manual_claim_refuses_a_reference_no_column_can_take(brand, reference):
    method = add_account_method(
        brand, "manual", display_name="Cash", account_name="Shop", account_number="A-1"
    )
    payment = PaymentFactory(brand=brand)
    with pytest.raises(ValidationFailed) as caught:
        submit_manual_claim(payment, method, reference)
    assert caught.value.errors[0]["field"] == "reference"
    db.session.rollback()
    assert (reload(payment).status, reload(payment).provider_trx_id) == ("created", None)
