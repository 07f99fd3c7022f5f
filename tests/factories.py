"""factory-boy factories: tests build rows through these, never with hand-written SQL."""

import secrets
import uuid
from datetime import timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

import factory

from gateway.accounts.models.brand import Brand
from gateway.accounts.models.user import User
from gateway.clock import utcnow
from gateway.extensions import db
from gateway.payments.models.customer import Customer
from gateway.payments.models.payment import Payment


class BaseFactory(factory.alchemy.SQLAlchemyModelFactory):
    class Meta:
        abstract = True
        sqlalchemy_session_factory = lambda: db.session  # noqa: E731 - the app context's session
        sqlalchemy_session_persistence = "commit"


class BrandFactory(BaseFactory):
    class Meta:
        model = Brand

    name = factory.Sequence(lambda n: f"Shop {n}")
    slug = factory.Sequence(lambda n: f"shop-{n}")
    currencies = "BDT"


class UserFactory(BaseFactory):
    brand_id = factory.LazyAttribute(lambda o: o.brand.id)
    email = factory.Sequence(lambda n: f"user{n}@example.com")
    role = "staff"
    password_hash = "unset"

    class Params:
        brand = factory.SubFactory(BrandFactory)
        password = "correct horse battery"

    @factory.post_generation
    def with_password(obj, create, extracted, **kwargs):
        obj.set_password(kwargs.get("value") or "correct horse battery")
        db.session.commit()

    class Meta:
        model = User
        exclude = ("brand",)


class CustomerFactory(BaseFactory):
    brand_id = factory.LazyAttribute(lambda o: o.brand.id)
    name = factory.Sequence(lambda n: f"Customer {n}")
    email = factory.Sequence(lambda n: f"customer{n}@example.com")
    phone = factory.Sequence(lambda n: f"+88017{n:08d}")

    class Params:
        brand = factory.SubFactory(BrandFactory)

    class Meta:
        model = Customer
        exclude = ("brand",)


class PaymentFactory(BaseFactory):
    class Meta:
        model = Payment

    public_id = factory.LazyFunction(lambda: str(uuid.uuid4()))
    token = factory.LazyFunction(lambda: secrets.token_urlsafe(24))
    brand = factory.SubFactory(BrandFactory)
    amount = Decimal("500.00")
    amount_refunded = Decimal("0.00")
    currency = "BDT"
    # As payments/amounts.py fixes them at creation: taka amounts in BDT, none without a rate.
    amount_bdt = factory.LazyAttribute(lambda p: p.amount if p.currency == "BDT" else None)
    fee = Decimal("0.00")
    amount_paid = factory.LazyAttribute(
        lambda p: None if p.amount_bdt is None else p.amount_bdt + p.fee
    )
    status = "created"
    reference = factory.Sequence(lambda n: f"ORDER-{n}")
    created_at = factory.LazyFunction(utcnow)
    updated_at = factory.LazyFunction(utcnow)
    expires_at = factory.LazyFunction(lambda: utcnow() + timedelta(minutes=30))


def completed_payment(**kwargs):
    """A payment taken through complete_payment, as a paid SMS would."""
    from gateway.payments.lifecycle import complete_payment

    payment = PaymentFactory(**kwargs)
    complete_payment(payment, provider="bkash", provider_trx_id=f"BK{secrets.token_hex(4).upper()}")
    return payment


def paired_device(brand, device_id=None, name="Shop phone", fingerprint=None):
    """A device paired through the real pairing service; returns (device, tokens, aes_key).

    Without a fingerprint, as OwnPay Console pairs, the device_id is the one each refresh presents.
    """
    from gateway.devices.pairing import create_pairing_code, pair_device

    return pair_device(
        {
            "pairing_code": create_pairing_code(brand),
            "device_id": device_id or uuid.uuid4().hex,
            "device_name": name,
            "app_version": "1.0.0",
            "platform": "android",
            "fingerprint": fingerprint,
        }
    )


def sms_message(aes_key, text, sender="bKash", local_id=None, received_at=None):
    """One item of POST /sms as the companion app builds it: the text encrypted under the device
    key.
    """
    from gateway.devices.crypto import encrypt_payload

    return {
        "local_id": local_id or uuid.uuid4().hex[:12],
        "sender": sender,
        "encrypted_payload": encrypt_payload(aes_key, text),
        "received_at": received_at or utcnow().isoformat(),
    }


def bkash_text(amount="500.00", trx_id="8N7A6B5C4D", counterparty="01712345678", balance="1500.00"):
    """A real-format bKash 'You have received' text."""
    from gateway.sms.parsing import build_sms_text

    return build_sms_text(
        "bkash", Decimal(amount), trx_id, counterparty, Decimal(balance), utcnow()
    )


def shop_clock(ago=timedelta(0), zone="Asia/Dhaka"):
    """The shop's wall-clock time `ago` before now, to the minute and naive, as wallet texts print
    their times: a text printed less than a day before a payment was created may pay it
    (sms/pays.py). Print it in the text's own format: `f"{shop_clock():%d-%m-%y}"`.
    """
    local = utcnow().astimezone(ZoneInfo(zone)) - ago
    return local.replace(tzinfo=None, second=0, microsecond=0)


from gateway.payments.models.payment_method import PaymentMethod  # noqa: E402 - appended with the factory below


class PaymentMethodFactory(BaseFactory):
    """A receiving number shown at checkout (bKash personal unless told)."""

    class Meta:
        model = PaymentMethod

    brand = factory.SubFactory(BrandFactory)
    provider = "bkash"
    number = factory.Sequence(lambda n: f"0171{n:07d}")
    kind = "personal"
    ask_sender_number = False
    enabled = True
    position = factory.Sequence(lambda n: n)


def ingest(phone, text, sender="bKash"):
    """Ingest one text as the paired phone (device, aes_key) would; returns its result and stored
    row (or None).
    """
    from gateway.sms.ingest import ingest_batch
    from gateway.sms.models.inbound_sms import InboundSms

    device, aes_key = phone
    [result] = ingest_batch(device, [sms_message(aes_key, text, sender=sender)])
    sms = db.session.execute(
        db.select(InboundSms).where(InboundSms.public_id == result["server_ref"])
    ).scalar_one_or_none()
    return result, sms


def forward(phone, text, sender="bKash"):
    """Ingest one text as the paired phone (device, aes_key) would; returns the stored row."""
    result, sms = ingest(phone, text, sender)
    assert sms is not None, result
    return sms


def forward_from(brand, text, sender="bKash"):
    """Ingest one text from a newly paired phone of `brand`; returns the stored row."""
    device, _, aes_key = paired_device(brand)
    return forward((device, aes_key), text, sender)


def reload(row):
    """A row as the database holds it now."""
    db.session.expire_all()
    return db.session.get(type(row), row.id)
