"""Accounts: brands, users, API keys, audit, rate-limit counters, idempotency records."""
