"""The baseline: bare Flask + SQLAlchemy doing the same work as the gateway, without auth or
validation.

A POST upserts the customer by e-mail and inserts the payment with its three URLs and the customer's
details; a GET reads the payment with its customer block. Two ORM models, the default session.
"""

import os
import secrets
import uuid
from decimal import Decimal

from flask import Flask, jsonify, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

app = Flask(__name__)


@event.listens_for(Engine, "connect")
def tune_sqlite(dbapi_connection, connection_record):
    """The same SQLite settings the gateway uses, so the comparison is of the code alone."""
    if "sqlite" not in type(dbapi_connection).__module__:
        return
    cursor = dbapi_connection.cursor()
    for pragma in (
        "journal_mode=WAL",
        "busy_timeout=10000",
        "foreign_keys=ON",
        "synchronous=NORMAL",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


app.config["SQLALCHEMY_DATABASE_URI"] = os.environ["DATABASE_URL"]
db = SQLAlchemy(app)


class Customer(db.Model):
    __tablename__ = "bare_customers"
    id = db.Column(db.Integer, primary_key=True)
    email = db.Column(db.String(254), unique=True)
    name = db.Column(db.String(200))
    phone = db.Column(db.String(20))


class Payment(db.Model):
    __tablename__ = "bare_payments"
    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(36), unique=True, nullable=False)
    token = db.Column(db.String(64), unique=True, nullable=False)
    customer_id = db.Column(db.Integer, db.ForeignKey("bare_customers.id"))
    amount = db.Column(db.BigInteger, nullable=False)
    currency = db.Column(db.String(3), nullable=False)
    reference = db.Column(db.String(255))
    status = db.Column(db.String(20), nullable=False)
    callback_url = db.Column(db.String(2048))
    redirect_url = db.Column(db.String(2048))
    cancel_url = db.Column(db.String(2048))
    customer_name = db.Column(db.String(200))
    customer_email = db.Column(db.String(254))
    customer_phone = db.Column(db.String(20))
    customer = db.relationship(Customer)


def upsert_customer(body):
    """The customer with this e-mail, created or brought up to date."""
    email = body.get("customer_mail")
    if not email:
        return None
    customer = db.session.execute(
        db.select(Customer).where(Customer.email == email)
    ).scalar_one_or_none()
    if customer is None:
        customer = Customer(email=email)
        db.session.add(customer)
    customer.name = body.get("customer_name")
    customer.phone = body.get("customer_phone")
    return customer


@app.post("/api/v1/payments")
def create():
    body = request.get_json()
    for _ in range(2):  # a concurrent request may insert the same new customer first
        payment = Payment(
            public_id=str(uuid.uuid4()),
            token=secrets.token_urlsafe(24),
            amount=int(Decimal(body["amount"]) * 100),
            currency=body.get("currency", "BDT"),
            reference=body.get("reference"),
            status="created",
            callback_url=body.get("callback_url"),
            redirect_url=body.get("redirect_url"),
            cancel_url=body.get("cancel_url"),
            customer_name=body.get("customer_name"),
            customer_email=body.get("customer_mail"),
            customer_phone=body.get("customer_phone"),
        )
        payment.customer = upsert_customer(body)
        db.session.add(payment)
        try:
            db.session.commit()
            break
        except IntegrityError:
            db.session.rollback()
    return jsonify(
        success=True,
        data={
            "payment_id": payment.public_id,
            "checkout_url": f"{request.host_url}checkout/{payment.token}",
            "status": payment.status,
        },
    ), 201


@app.get("/api/v1/payments/<payment_id>")
def read(payment_id):
    payment, customer = db.session.execute(
        db.select(Payment, Customer)
        .outerjoin(Customer, Payment.customer_id == Customer.id)
        .where(Payment.public_id == payment_id)
    ).one()
    return jsonify(
        success=True,
        data={
            "payment_id": payment.public_id,
            "status": payment.status,
            "amount": f"{Decimal(payment.amount) / 100:.2f}",
            "currency": payment.currency,
            "reference": payment.reference,
            "customer": {
                "name": customer.name if customer else payment.customer_name,
                "email": customer.email if customer else payment.customer_email,
                "phone": customer.phone if customer else payment.customer_phone,
            },
        },
    )


with app.app_context():
    try:
        db.create_all()
    except (OperationalError, IntegrityError, ProgrammingError):
        pass  # another worker, booting at the same moment, created them first
