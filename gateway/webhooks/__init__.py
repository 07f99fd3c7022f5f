"""Webhooks: events, delivery and its retry schedule, transport with address checks, the log."""
