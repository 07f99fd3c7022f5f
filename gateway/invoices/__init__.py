"""Invoices: numbered per brand, sent by e-mail and SMS, paid through the hosted checkout."""
