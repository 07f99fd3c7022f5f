"""Invoice tests: panel sign-in fixtures, a customer, and a helper that writes an invoice."""

import pytest

from gateway.extensions import db
from gateway.invoices.drafting import create_invoice
from tests.panel.conftest import admin, as_admin, as_staff, client, staff  # noqa: F401 - fixtures

ITEMS = [
    {"description": "Web design / ওয়েব ডিজাইন", "quantity": "2", "unit_price": "1500.50"},
    {"description": "Hosting", "quantity": "1.5", "unit_price": "100"},
]


def an_invoice(brand, **overrides):
    """A committed draft for a customer with e-mail and phone (subtotal 3151.00)."""
    data = {
        "customer": {
            "name": "রহিম উদ্দিন",
            "email": "rahim@example.com",
            "phone": "+8801712345678",
        },
        "items": ITEMS,
        "discount": "100",
        "vat_rate": "15",
        "notes": "ধন্যবাদ! Thank you.",
        "due_date": "2026-12-31",
        **overrides,
    }
    invoice = create_invoice(brand, data)
    db.session.commit()
    return invoice


@pytest.fixture
def invoice(brand):
    return an_invoice(brand)
