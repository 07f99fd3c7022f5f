"""Payments: states and transitions, lifecycle, refunds, customers, methods, reporting."""
