"""The baseline: bare Flask + SQLAlchemy doing the same insert and read, no auth or validation."""

import os
import secrets
import uuid
from decimal import Decimal

from flask import Flask, jsonify, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import event
from sqlalchemy.engine import Engine

app = Flask(__name__)


@event.listens_for(Engine, "connect")
def tune_sqlite(dbapi_connection, connection_record):
    """The same SQLite settings the gateway uses, so the comparison is of the code alone."""
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


class Payment(db.Model):
    __tablename__ = "bare_payments"
    id = db.Column(db.Integer, primary_key=True)
    public_id = db.Column(db.String(36), unique=True, nullable=False)
    token = db.Column(db.String(64), unique=True, nullable=False)
    amount = db.Column(db.BigInteger, nullable=False)
    currency = db.Column(db.String(3), nullable=False)
    reference = db.Column(db.String(255))
    status = db.Column(db.String(20), nullable=False)


@app.post("/api/v1/payments")
def create():
    body = request.get_json()
    payment = Payment(
        public_id=str(uuid.uuid4()),
        token=secrets.token_urlsafe(24),
        amount=int(Decimal(body["amount"]) * 100),
        currency=body["currency"],
        reference=body.get("reference"),
        status="created",
    )
    db.session.add(payment)
    db.session.commit()
    return jsonify(
        success=True,
        data={"payment_id": payment.public_id, "token": payment.token, "status": payment.status},
    ), 201


@app.get("/api/v1/payments/<payment_id>")
def read(payment_id):
    payment = db.session.execute(
        db.select(Payment).where(Payment.public_id == payment_id)
    ).scalar_one()
    return jsonify(
        success=True,
        data={
            "payment_id": payment.public_id,
            "status": payment.status,
            "amount": f"{Decimal(payment.amount) / 100:.2f}",
            "currency": payment.currency,
        },
    )


with app.app_context():
    db.create_all()
