"""A method's fee passed to the customer: the one rule (fixed + percent, within min and max,
rounded up to the paisa) and the checks on what a merchant may set."""

from decimal import Decimal

import pytest

from gateway.domain_errors import ValidationFailed
from gateway.payments.fees import describe_fee, fee_example, fee_for
from gateway.payments.methods import add_method, update_method
from gateway.payments.models.payment_method import PaymentMethod
from tests.factories import PaymentMethodFactory, reload


def method(**fee):
    """A method with these fee parts (not stored: the rule reads the row only)."""
    return PaymentMethod(
        **{"fee_fixed": Decimal("0"), "fee_percent": Decimal("0"), "fee_min": None, **fee}
    )


@pytest.mark.parametrize(
    ("fee", "amount", "expected"),
    [
        ({}, "1000.00", "0.00"),  # no fee
        ({"fee_percent": Decimal("1.85")}, "1000.00", "18.50"),  # percent
        ({"fee_fixed": Decimal("5.00")}, "1000.00", "5.00"),  # fixed
        ({"fee_fixed": Decimal("5"), "fee_percent": Decimal("1.5")}, "200.00", "8.00"),  # both
        # The minimum raises a small fee, the maximum caps a large one.
        ({"fee_percent": Decimal("2"), "fee_min": Decimal("10")}, "100.00", "10.00"),
        ({"fee_percent": Decimal("2"), "fee_min": Decimal("10")}, "1000.00", "20.00"),
        ({"fee_percent": Decimal("2"), "fee_max": Decimal("25")}, "5000.00", "25.00"),
        ({"fee_percent": Decimal("2"), "fee_max": Decimal("25")}, "1000.00", "20.00"),
        # Exactly at the bounds.
        ({"fee_percent": Decimal("2"), "fee_min": Decimal("20")}, "1000.00", "20.00"),
        ({"fee_percent": Decimal("2"), "fee_max": Decimal("20")}, "1000.00", "20.00"),
        # Rounded UP to the paisa: 1.85% of 10.01 is 0.185185 → 0.19, never 0.18.
        ({"fee_percent": Decimal("1.85")}, "10.01", "0.19"),
        # A fee already in whole paisa is not raised: 1.85% of 100.00 is exactly 1.85.
        ({"fee_percent": Decimal("1.85")}, "100.00", "1.85"),
        # The smallest excess above a paisa still rounds up: 0.001% of 1.00 = 0.00001 → 0.01.
        ({"fee_percent": Decimal("0.001")}, "1.00", "0.01"),
        # A 0.125% fee on 999.99 is 1.2499875 → 1.25.
        ({"fee_percent": Decimal("0.125")}, "999.99", "1.25"),
    ],
)
def test_the_fee_is_fixed_plus_percent_within_the_bounds_rounded_up_to_the_paisa(
    fee, amount, expected
):
    charged = fee_for(method(**fee), Decimal(amount))

    assert charged == Decimal(expected) and str(charged) == expected


def test_a_payment_without_a_taka_amount_is_charged_no_fee():
    assert fee_for(method(fee_fixed=Decimal("5")), None) == Decimal("0.00")


def test_the_worked_example_and_the_description():
    bkash = method(fee_fixed=Decimal("0"), fee_percent=Decimal("1.85"))

    assert fee_example(bkash) == (Decimal("1000.00"), Decimal("18.50"), Decimal("1018.50"))
    assert describe_fee(bkash) == "1.85%"
    assert describe_fee(method()) == "no fee"
    assert (
        describe_fee(
            method(
                fee_fixed=Decimal("5"),
                fee_percent=Decimal("1"),
                fee_min=Decimal("10"),
                fee_max=Decimal("50"),
            )
        )
        == "5.00 + 1% (min 10.00, max 50.00)"
    )


def test_a_merchant_sets_and_clears_a_fee(app, brand):
    bkash = PaymentMethodFactory(brand=brand)

    update_method(bkash, fee_fixed="5", fee_percent="1.85", fee_min="10", fee_max="50.50")
    stored = reload(bkash)
    assert (stored.fee_fixed, stored.fee_percent, stored.fee_min, stored.fee_max) == (
        Decimal("5.00"),
        Decimal("1.850"),
        Decimal("10.00"),
        Decimal("50.50"),
    )
    update_method(stored, fee_min="", fee_max="")
    assert (reload(bkash).fee_min, reload(bkash).fee_max) == (None, None)


def test_a_new_method_takes_its_fee(app, brand):
    nagad = add_method(brand, "nagad", "01812345678", fee_percent="1.5", fee_max="30")

    assert (reload(nagad).fee_percent, reload(nagad).fee_max) == (Decimal("1.500"), Decimal("30"))


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"fee_fixed": "-1"}, "fee_fixed", "The fixed fee cannot be negative."),
        ({"fee_min": "-0.01"}, "fee_min", "The minimum fee cannot be negative."),
        ({"fee_max": "-5"}, "fee_max", "The maximum fee cannot be negative."),
        ({"fee_percent": "-0.5"}, "fee_percent", "The fee percent cannot be negative."),
        ({"fee_percent": "100.001"}, "fee_percent", "The fee percent cannot be over 100."),
        ({"fee_percent": "150"}, "fee_percent", "The fee percent cannot be over 100."),
        ({"fee_percent": "1.2345"}, "fee_percent", "The fee percent takes at most three"),
        ({"fee_percent": "abc"}, "fee_percent", "The fee percent must be a number"),
        ({"fee_percent": "NaN"}, "fee_percent", "The fee percent must be a number"),
        ({"fee_percent": "Infinity"}, "fee_percent", "The fee percent must be a number"),
        ({"fee_fixed": "5.001"}, "fee_fixed", "The fixed fee must be an amount in taka"),
        ({"fee_fixed": "৫"}, "fee_fixed", "The fixed fee must be an amount in taka"),
        ({"fee_fixed": "1e3"}, "fee_fixed", "The fixed fee must be an amount in taka"),
        ({"fee_max": "ten"}, "fee_max", "The maximum fee must be an amount in taka"),
        (
            {"fee_min": "50", "fee_max": "10"},
            "fee_min",
            "The minimum fee (50.00) cannot be above the maximum fee (10.00).",
        ),
    ],
)
def test_a_bad_fee_is_refused_naming_the_field_and_nothing_changes(
    app, brand, changes, field, message
):
    bkash = PaymentMethodFactory(brand=brand, fee_percent=Decimal("1"))

    with pytest.raises(ValidationFailed) as refused:
        update_method(bkash, **changes)

    assert refused.value.errors[0]["field"] == field
    assert refused.value.errors[0]["message"].startswith(message)
    assert reload(bkash).fee_percent == Decimal("1.000")


def test_a_minimum_above_the_stored_maximum_is_refused(app, brand):
    bkash = PaymentMethodFactory(brand=brand, fee_max=Decimal("20"))

    with pytest.raises(ValidationFailed) as refused:
        update_method(bkash, fee_min="25")

    assert refused.value.errors[0]["field"] == "fee_min"
    assert reload(bkash).fee_min is None
