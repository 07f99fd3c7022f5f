"""A second process that keeps creating payments (each with its own customer, one transaction) in a
SQLite file.

Run as `python -m tests.backup_writer DATABASE_URL`; it writes until killed and prints each
committed reference.
"""

import sys
from decimal import Decimal

from gateway import create_app
from gateway.accounts.models.brand import Brand
from gateway.extensions import db
from gateway.payments.lifecycle import create_payment


def write_forever(url):
    """Create payment REF-1, REF-2, … one committed transaction each, until the process is
    stopped."""
    app = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": url,
            "REDIS_URL": None,
            "SQLALCHEMY_ENGINE_OPTIONS": {},
        }
    )
    with app.app_context():
        brand = db.session.execute(db.select(Brand)).scalar_one()
        number = 0
        while True:
            number += 1
            create_payment(
                brand,
                {
                    "amount": Decimal(number) + Decimal("0.25"),
                    "currency": "BDT",
                    "reference": f"REF-{number}",
                    "customer_mail": f"c{number}@shop.example",
                },
            )
            print(number, flush=True)


if __name__ == "__main__":
    write_forever(sys.argv[1])
