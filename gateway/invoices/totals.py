"""An invoice's arithmetic, in Decimal: line amounts, discount, VAT and the total."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def line_amount(quantity, unit_price):
    """Quantity × unit price, rounded half-up to the cent."""
    return (Decimal(quantity) * Decimal(unit_price)).quantize(CENT, rounding=ROUND_HALF_UP)


def invoice_totals(lines, discount, vat_rate):
    """(subtotal, vat_amount, total) of (quantity, unit_price) lines: VAT on the discounted sum."""
    subtotal = sum((line_amount(q, p) for q, p in lines), Decimal("0.00"))
    taxable = subtotal - Decimal(discount)
    vat = (taxable * Decimal(vat_rate) / 100).quantize(CENT, rounding=ROUND_HALF_UP)
    return subtotal, vat, taxable + vat
