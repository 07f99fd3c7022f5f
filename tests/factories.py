"""factory-boy factories: tests build rows through these, never with hand-written SQL."""
import secrets
import uuid
from datetime import timedelta
from decimal import Decimal

import factory

from gateway.clock import utcnow
from gateway.extensions import db
from gateway.models import Brand, Customer, Payment, User


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
    status = "created"
    reference = factory.Sequence(lambda n: f"ORDER-{n}")
    created_at = factory.LazyFunction(utcnow)
    updated_at = factory.LazyFunction(utcnow)
    expires_at = factory.LazyFunction(lambda: utcnow() + timedelta(minutes=30))


def completed_payment(**kwargs):
    """A payment taken through complete_payment, as a paid SMS would."""
    from gateway.services.payments import complete_payment

    payment = PaymentFactory(**kwargs)
    complete_payment(payment, provider="bkash", provider_trx_id=f"BK{secrets.token_hex(4).upper()}")
    return payment
