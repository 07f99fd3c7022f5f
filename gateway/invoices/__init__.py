"""Invoices: numbered per brand, sent by e-mail and SMS, paid through the hosted checkout.

Importing the package connects `lifecycle.mark_invoice_paid` to payments' `payment_completed`
signal (gateway/db_models.py imports the models, so every app and worker has it connected).
"""

from . import lifecycle  # noqa: F401 - connects the payment_completed receiver
