"""`flask gateway update-method ID --fee-fixed F --fee-percent P [--fee-min X] [--fee-max Y]`:
sets a method's fee, says it back, and fails naming the option at fault."""

from decimal import Decimal

import pytest

from gateway.payments.methods import add_method
from tests.factories import reload


def test_cli_sets_a_methods_fee_and_lists_it(runner, brand):
    method = add_method(brand, "bkash", "01712345678")

    result = runner.invoke(
        args=[
            "gateway",
            "update-method",
            str(method.id),
            *("--fee-fixed", "5", "--fee-percent", "1.85"),
            *("--fee-min", "10", "--fee-max", "50"),
        ]
    )

    assert result.exit_code == 0, result.output
    assert "fee 5.00 + 1.85% (min 10.00, max 50.00)" in result.output
    stored = reload(method)
    assert (stored.fee_fixed, stored.fee_percent, stored.fee_min, stored.fee_max) == (
        Decimal("5.00"),
        Decimal("1.850"),
        Decimal("10.00"),
        Decimal("50.00"),
    )
    listed = runner.invoke(args=["gateway", "list-methods"])
    assert "fee 5.00 + 1.85% (min 10.00, max 50.00)" in listed.output
    cleared = runner.invoke(
        args=["gateway", "update-method", str(method.id), "--fee-min", "", "--fee-max", ""]
    )
    assert cleared.exit_code == 0, cleared.output
    assert (reload(method).fee_min, reload(method).fee_max) == (None, None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fee-fixed", "-5"], "Invalid value for --fee-fixed: The fixed fee cannot be negative."),
        (
            ["--fee-percent", "101"],
            "Invalid value for --fee-percent: The fee percent cannot be over 100.",
        ),
        (["--fee-percent", "two"], "Invalid value for --fee-percent: The fee percent must be"),
        (
            ["--fee-min", "50", "--fee-max", "10"],
            "Invalid value for --fee-min: The minimum fee (50.00) cannot be above the maximum",
        ),
        (["--fee-max", "1.234"], "Invalid value for --fee-max: The maximum fee must be an amount"),
    ],
)
def test_cli_refuses_a_bad_fee_naming_the_option_and_changes_nothing(runner, brand, args, message):
    method = add_method(brand, "bkash", "01712345678", fee_percent="1")

    result = runner.invoke(args=["gateway", "update-method", str(method.id), *args])

    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    stored = reload(method)
    assert (stored.fee_fixed, stored.fee_percent, stored.fee_min, stored.fee_max) == (
        Decimal("0.00"),
        Decimal("1.000"),
        None,
        None,
    )
