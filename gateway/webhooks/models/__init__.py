"""The webhooks domain's tables."""
