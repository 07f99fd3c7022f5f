"""Two payments for one new customer at once: the slower insert finds the faster one's row, never a
500.
"""

from decimal import Decimal

from sqlalchemy import event

from gateway.extensions import db
from gateway.payments.lifecycle import create_payment
from gateway.payments.models.customer import Customer

EMAIL = "race@shop.example"


def payment_data():
    return {
        "amount": Decimal("500.00"),
        "currency": "BDT",
        "customer_name": "Racing Customer",
        "customer_mail": EMAIL,
        "customer_phone": "+8801712345678",
    }


def test_a_customer_inserted_meanwhile_by_another_request_is_used_not_duplicated(brand):
    competitor = {}

    def insert_first(conn, cursor, statement, parameters, context, executemany):
        """Just before this request inserts the customer, another request commits the same
        e-mail."""
        if statement.startswith("INSERT INTO customers") and not competitor:
            competitor["id"] = None  # the competitor's own INSERT passes through here too
            with db.engine.connect() as other:
                competitor["id"] = other.execute(
                    Customer.__table__.insert()
                    .values(brand_id=brand.id, email=EMAIL, name="First", created_at=db.func.now())
                    .values(updated_at=db.func.now())
                    .returning(Customer.__table__.c.id)
                ).scalar_one()
                other.commit()

    event.listen(db.engine, "before_cursor_execute", insert_first)
    try:
        payment = create_payment(brand, payment_data())
    finally:
        event.remove(db.engine, "before_cursor_execute", insert_first)

    db.session.expire_all()
    customers = db.session.scalars(db.select(Customer)).all()
    assert [customer.id for customer in customers] == [competitor["id"]]
    assert payment.customer_id == competitor["id"]
    assert customers[0].name == "Racing Customer"  # brought up to date by the later payment
