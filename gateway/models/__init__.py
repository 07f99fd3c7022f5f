"""The data model: every tenant row carries brand_id."""
from .api_key import SCOPES, ApiKey
from .brand import Brand, new_webhook_secret
from .customer import Customer
from .idempotency import IdempotencyRecord
from .payment import OPEN_STATUSES, PAID_STATUSES, PAYMENT_STATUSES, Payment, Refund, Transaction
from .user import ROLES, User

__all__ = [
    "ApiKey", "Brand", "Customer", "IdempotencyRecord", "OPEN_STATUSES", "PAID_STATUSES",
    "PAYMENT_STATUSES", "Payment", "ROLES", "Refund", "SCOPES", "Transaction", "User",
    "new_webhook_secret",
]
