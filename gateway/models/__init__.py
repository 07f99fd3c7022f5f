"""The data model: every tenant row carries brand_id."""
from .api_key import SCOPES, ApiKey
from .audit import AuditLog
from .brand import Brand, new_webhook_secret
from .customer import Customer
from .device import Device, PairingCode
from .idempotency import IdempotencyRecord
from .inbound_sms import SMS_STATUSES, InboundSms
from .notification import Notification
from .outbound_sms import OUTBOUND_SMS_STATUSES, OutboundSms
from .payment_method import METHOD_KINDS, PROVIDERS, PaymentMethod
from .payment import OPEN_STATUSES, PAID_STATUSES, PAYMENT_STATUSES, Payment, Refund, Transaction
from .rate_limit import RateLimitCounter
from .sms_template import SmsTemplate
from .user import ROLES, User
from .webhook import DELIVERY_STATUSES, WebhookAttempt, WebhookDelivery

__all__ = [
    "ApiKey", "Brand", "Customer", "IdempotencyRecord", "OPEN_STATUSES", "PAID_STATUSES",
    "PAYMENT_STATUSES", "Payment", "ROLES", "Refund", "SCOPES", "Transaction", "User",
    "new_webhook_secret",
    "METHOD_KINDS", "PROVIDERS", "PaymentMethod",
]
__all__ += ["Device", "InboundSms", "Notification", "PairingCode", "SMS_STATUSES", "SmsTemplate"]
__all__ += ["DELIVERY_STATUSES", "OUTBOUND_SMS_STATUSES", "OutboundSms", "WebhookAttempt", "WebhookDelivery"]
__all__ += ["AuditLog"]
__all__ += ["RateLimitCounter"]
