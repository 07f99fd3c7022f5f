"""The sms domain's tables."""
