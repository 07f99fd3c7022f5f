"""The invoices domain's tables."""
